#include "tools/agent_tools/base64.h"

#include <array>
#include <cstdint>

namespace kiln::agent_tools {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int, 256> decodeTable() {
  std::array<int, 256> table{};
  for (int& entry : table) entry = -1;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  }
  return table;
}

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      group = (group << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63U] : '=');
    }
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
  static constexpr std::array<int, 256> kTable = decodeTable();
  std::string digits;
  digits.reserve(text.size());
  for (char c : text) {
    if (!isSpace(c)) digits.push_back(c);
  }
  if (digits.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < digits.size() && digits[digits.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string out;
  out.reserve(digits.size() / 4 * 3);
  for (std::size_t i = 0; i < digits.size(); i += 4) {
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::size_t at = i + k;
      const bool pad = at >= digits.size() - padding;
      const int six = pad ? 0 : kTable[static_cast<unsigned char>(digits[at])];
      if (six < 0) return std::nullopt;
      group = (group << 6) | static_cast<std::uint32_t>(six);
    }
    const std::size_t keep = i + 4 == digits.size() ? 3 - padding : 3;
    for (std::size_t k = 0; k < keep; ++k) {
      out.push_back(static_cast<char>((group >> (16 - 8 * k)) & 0xFFU));
    }
  }
  return out;
}

}  // namespace kiln::agent_tools
