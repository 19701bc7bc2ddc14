#include "tests/fuzz/fuzz_input.h"

#include <algorithm>

namespace kiln::fuzz {

std::optional<Record> RecordReader::next() {
  if (records_ >= kMaxRecords || bytes_.size() - position_ < 3) return std::nullopt;
  auto op = static_cast<std::uint8_t>(bytes_[position_]);
  std::size_t length =
      static_cast<std::uint8_t>(bytes_[position_ + 1]) |
      (static_cast<std::size_t>(static_cast<std::uint8_t>(bytes_[position_ + 2])) << 8);
  position_ += 3;
  length = std::min(length, bytes_.size() - position_);
  Record record;
  record.kind = static_cast<RecordKind>((op & 0x0f) % 3);
  record.peer = static_cast<std::uint8_t>((op >> 4) & 0x07);
  record.payload = bytes_.substr(position_, length);
  position_ += length;
  ++records_;
  return record;
}

std::string encodeRecord(RecordKind kind, std::uint8_t peer, std::string_view payload) {
  std::string out;
  out += static_cast<char>(static_cast<std::uint8_t>(kind) | ((peer & 0x07) << 4));
  auto length = static_cast<std::uint16_t>(std::min<std::size_t>(payload.size(), 0xffff));
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>(length >> 8);
  out += payload.substr(0, length);
  return out;
}

std::uint64_t tickMillis(std::string_view payload) {
  std::uint64_t millis = 0;
  for (std::size_t i = 0; i < std::min<std::size_t>(payload.size(), 8); ++i) {
    millis |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(payload[i])) << (8 * i);
  }
  return millis;
}

}  // namespace kiln::fuzz
