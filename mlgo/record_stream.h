// The byte stream a compiler writes on BASE.out, parsed apart from where the
// bytes come from: InteractiveChannel reads it from a FIFO, tests and the
// fuzzer from a buffer. Sequence: one header line (channel_header.h); then any
// mix of {"context":NAME} lines and {"observation":N} / {"outcome":N} lines,
// each followed by its tensor bytes and a '\n'; the end of the stream at a
// record boundary ends the episode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/value.h"
#include "mlgo/channel_header.h"

namespace kiln::mlgo {

struct Observation {
  std::int64_t index = 0;       // the N of {"observation":N}
  std::string context;          // the last {"context":...} (function name for llc)
  std::vector<Value> features;  // one tensor per header feature, in header order
};

// The feature called `name` of `observation`, or nullptr.
const Value* findFeature(const ChannelHeader& header, const Observation& observation,
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

// Turns the records after the header into observations; outcome records are
// checked and skipped. Keeps the last context between calls.
class RecordReader {
 public:
  RecordReader(ChannelHeader header, std::size_t maxLineBytes)
      : header_(std::move(header)), maxLineBytes_(maxLineBytes) {}

  // The next observation, or nullopt when the stream ended at a record boundary.
  Result<std::optional<Observation>> next(RecordSource& source);
  const ChannelHeader& header() const { return header_; }

 private:
  ChannelHeader header_;
  std::size_t maxLineBytes_;
  std::string context_;
};

// `text` quoted for an error message: at most 80 characters, the
// unprintable ones as '?', so that compiler garbage cannot garble the log.
std::string shown(std::string_view text);

}  // namespace kiln::mlgo
