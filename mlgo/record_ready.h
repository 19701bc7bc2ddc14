// Whether the next observation can be read without waiting, judged from the
// bytes already read off BASE.out (record_stream.h has the sequence). Lets a
// worker wait for the compiler in its poll loop and parse on that loop only
// records that are whole, leaving every slow or failing case to a thread.
#pragma once

#include <cstddef>
#include <string_view>

#include "mlgo/channel_header.h"

namespace kiln::mlgo {

enum class RecordReadiness {
  kIncomplete,   // more bytes must arrive first: keep waiting
  kObservation,  // a whole observation record (after any context/outcome records) is buffered
  kOther,        // the stream ended or a buffered line is not a record: reading will say which
};

// `buffered`: the unread bytes; `closed`: the compiler closed its output.
RecordReadiness recordReadiness(std::string_view buffered, const ChannelHeader& header,
                                std::size_t maxLineBytes, bool closed);

}  // namespace kiln::mlgo
