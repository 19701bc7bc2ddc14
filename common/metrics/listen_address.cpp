#include "common/metrics/listen_address.h"

#include <fmt/format.h>

#include <charconv>

namespace kiln::metrics {

namespace {

constexpr std::size_t kMaxHostLength = 253;  // the longest DNS name

bool isHostCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

}  // namespace

Result<ListenAddress> parseListenAddress(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return invalidArgument(fmt::format(
        "metrics address '{}' has no port: write ADDR:PORT, e.g. 127.0.0.1:9100 (port 0 = any)",
        text));
  }
  std::string_view host = text.substr(0, colon);
  std::string_view port = text.substr(colon + 1);
  if (host.empty()) {
    return invalidArgument(
        fmt::format("metrics address '{}' has no host: write e.g. 127.0.0.1:{}", text, port));
  }
  if (host.size() > kMaxHostLength) {
    return invalidArgument(fmt::format("metrics host is {} characters long, over the limit of {}",
                                       host.size(), kMaxHostLength));
  }
  for (char c : host) {
    if (!isHostCharacter(c)) {
      return invalidArgument(fmt::format(
          "metrics host '{}' contains '{}': use an IPv4 address or a host name", host, c));
    }
  }
  int value = -1;
  auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || value < 0 ||
      value > 65535) {
    return invalidArgument(
        fmt::format("metrics port '{}' is not a number from 0 to 65535 (0 = any free port)", port));
  }
  return ListenAddress{std::string(host), value};
}

bool isLoopbackHost(std::string_view host) {
  return host == "localhost" || host.starts_with("127.");
}

}  // namespace kiln::metrics
