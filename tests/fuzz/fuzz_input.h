// The input format of the handler fuzzers: a sequence of records, each
//   [op: 1 byte][length: 2 bytes little-endian][payload: length bytes]
// so that one input replays a conversation (register, then place; start,
// then step). The op's low bits say what the payload is (a raw frame, bytes
// for the structured envelope builder, or a clock advance); its high bits pick
// the peer. Seeds written by make_seed_corpus use the same format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::fuzz {

enum class RecordKind : std::uint8_t {
  kRawFrame = 0,    // payload: the bytes of one ZeroMQ frame
  kStructured = 1,  // payload: FuzzedDataProvider bytes for buildEnvelope()
  kTick = 2,        // payload: milliseconds to advance the clock (LE), then tick()
};
inline constexpr std::size_t kMaxRecords = 64;

struct Record {
  RecordKind kind = RecordKind::kRawFrame;
  std::uint8_t peer = 0;  // 0..7
  std::string_view payload;
};

class RecordReader {
 public:
  RecordReader(const std::uint8_t* data, std::size_t size)
      : bytes_(reinterpret_cast<const char*>(data), size) {}
  // The next record, or nullopt at the end (a truncated last record is cut short).
  std::optional<Record> next();

 private:
  std::string_view bytes_;
  std::size_t position_ = 0;
  std::size_t records_ = 0;
};

// One record in the wire format above.
std::string encodeRecord(RecordKind kind, std::uint8_t peer, std::string_view payload);

// The little-endian milliseconds of a tick payload (at most 8 bytes read).
std::uint64_t tickMillis(std::string_view payload);

}  // namespace kiln::fuzz
