// The byte stream a compiler writes on BASE.out, parsed apart from where the
// bytes come from: InteractiveChannel reads it from a FIFO, tests and the
// fuzzer from a buffer. Sequence: one header line (channel_header.h); then any
// mix of {"context":NAME} lines and {"observation":N} / {"outcome":N} lines,
// each followed by its tensor bytes and a '\n'; the end of the stream at a
// record boundary ends the episode. An observation keeps its tensors as the
// raw bytes: a step usually looks at one feature or none, so each feature is
// decoded only when asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/mlgo_channel/channel_header.h"
#include "compilers/mlgo_channel/control_line.h"
#include "compilers/mlgo_channel/record_ready.h"

namespace kiln::mlgo_channel {

struct Observation {
  std::int64_t index = 0;  // the N of {"observation":N}
  std::string context;     // the last {"context":...} (function name for llc)
  std::string tensors;     // every feature's bytes in header order (header.observationBytes())
};

// Feature `index` of `observation` (an observation of `header`'s stream),
// decoded as tensor_codec.h says; invalid-argument if there is no such feature.
Result<Value> decodeFeature(const ChannelHeader& header, const Observation& observation,
                            std::size_t index);
// Every feature, in header order.
Result<std::vector<Value>> decodeFeatures(const ChannelHeader& header,
                                          const Observation& observation);
// The feature called `name`, decoded, or nullopt if the header has none.
std::optional<Value> findFeature(const ChannelHeader& header, const Observation& observation,
                                 std::string_view name);

// Where the bytes come from. Both reads follow FifoReader's contract: a line
// without its '\n' or nullopt at a clean end; exactly `n` bytes or an error.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual Result<std::optional<std::string>> readLine(std::size_t maxBytes) = 0;
  virtual Result<std::string> readExact(std::size_t n) = 0;
};

// A whole stream already in memory (not owned: `bytes` must outlive it).
class BufferSource final : public RecordSource {
 public:
  explicit BufferSource(std::string_view bytes) : bytes_(bytes) {}
  Result<std::optional<std::string>> readLine(std::size_t maxBytes) override;
  Result<std::string> readExact(std::size_t n) override;
  std::size_t position() const { return position_; }  // bytes consumed so far

 private:
  std::string_view bytes_;
  std::size_t position_ = 0;
};

// Reads and parses the header line. disconnected if the stream ends first,
// compile-error (the compiler broke the protocol) if the line is not a header.
Result<ChannelHeader> readHeader(RecordSource& source, const HeaderLimits& limits);

// An observation taken from bytes already read, without waiting.
struct BufferedObservation {
  RecordReadiness readiness = RecordReadiness::kIncomplete;
  std::size_t consumed = 0;                // kObservation: the bytes it took (drop them)
  std::optional<Observation> observation;  // set for kObservation
};

// Turns the records after the header into observations; outcome records are
// checked and skipped. Keeps the last context between calls.
class RecordReader {
 public:
  RecordReader(ChannelHeader header, std::size_t maxLineBytes)
      : header_(std::move(header)),
        maxLineBytes_(maxLineBytes),
        observationBytes_(header_.observationBytes()) {}

  // The next observation, or nullopt when the stream ended at a record boundary.
  Result<std::optional<Observation>> next(RecordSource& source);
  // The next observation if `buffered` (the unread bytes; `closed`: no more
  // will come) holds all of it, parsed once. Anything else (more bytes
  // needed, the end, a broken record) consumes nothing: next() reads it then.
  BufferedObservation takeBuffered(std::string_view buffered, bool closed);
  const ChannelHeader& header() const { return header_; }
  std::size_t observationBytes() const { return observationBytes_; }
  std::size_t maxLineBytes() const { return maxLineBytes_; }

 private:
  ChannelHeader header_;
  std::size_t maxLineBytes_;
  std::size_t observationBytes_;
  std::string context_;
};

}  // namespace kiln::mlgo_channel
