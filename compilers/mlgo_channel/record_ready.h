// Whether the next observation can be read without waiting, judged from the
// bytes already read off BASE.out (record_stream.h has the sequence). Lets a
// worker wait for the compiler in its poll loop and take on that loop only
// records that are whole, leaving every slow or failing case to a thread.
// The scan parses each line once and says where the observation lies, so
// that taking it (RecordReader::takeBuffered) parses nothing again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compilers/mlgo_channel/channel_header.h"

namespace kiln::mlgo_channel {

enum class RecordReadiness {
  kIncomplete,   // more bytes must arrive first: keep waiting
  kObservation,  // a whole observation record (after any context/outcome records) is buffered
  kOther,        // the stream ended or a buffered line is not a record: reading will say which
};

struct BufferedRecords {
  RecordReadiness readiness = RecordReadiness::kIncomplete;
  // The rest is set for kObservation only.
  std::size_t end = 0;                 // bytes up to and including the observation's closing '\n'
  std::int64_t index = 0;              // the N of {"observation":N}
  std::optional<std::string> context;  // the last {"context":...} before it, if any
  std::string_view tensors;            // its tensor bytes, a view into the scanned bytes
};

// `buffered`: the unread bytes; `closed`: the compiler closed its output;
// `observationBytes`: header.observationBytes().
BufferedRecords scanRecords(std::string_view buffered, const ChannelHeader& header,
                            std::size_t observationBytes, std::size_t maxLineBytes, bool closed);

RecordReadiness recordReadiness(std::string_view buffered, const ChannelHeader& header,
                                std::size_t maxLineBytes, bool closed);

}  // namespace kiln::mlgo_channel
