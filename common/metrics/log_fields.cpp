#include "common/metrics/log_fields.h"

#include <fmt/format.h>

namespace kiln::logfields {

namespace {

bool needsQuotes(std::string_view value) {
  for (unsigned char c : value) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

std::string quoted(std::string_view value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < ' ' || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string session(std::uint64_t id) { return fmt::format("session={:x}", id); }

std::string experiment(std::string_view name) {
  if (name.empty()) return "experiment=-";
  if (needsQuotes(name)) return "experiment=" + quoted(name);
  return fmt::format("experiment={}", name);
}

std::string sessionAndExperiment(std::uint64_t id, std::string_view name) {
  return session(id) + " " + experiment(name);
}

}  // namespace kiln::logfields
