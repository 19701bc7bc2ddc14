#include "common/transport/tcp_stream.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace kiln {
namespace {

struct AddressList {
  addrinfo* head = nullptr;
  ~AddressList() {
    if (head != nullptr) ::freeaddrinfo(head);
  }
};

// The first address of host:port (numeric or a name); `passive` for a bind,
// where "*" means every interface.
Status resolve(const std::string& host, std::uint16_t port, bool passive, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  const bool any = passive && (host == "*" || host.empty());
  const std::string service = std::to_string(port);
  const int failed =
      ::getaddrinfo(any ? nullptr : host.c_str(), service.c_str(), &hints, &out.head);
  if (failed != 0 || out.head == nullptr) {
    return invalidArgument(fmt::format("cannot resolve '{}': {}", host,
                                       failed != 0 ? ::gai_strerror(failed) : "none"));
  }
  return okStatus();
}

std::string errnoText() { return std::strerror(errno); }

}  // namespace

std::optional<std::uint16_t> parsePort(std::string_view text) {
  unsigned port = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || port > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(port);
}

std::optional<TcpHostPort> splitTcpEndpoint(std::string_view endpoint) {
  constexpr std::string_view kScheme = "tcp://";
  if (!endpoint.starts_with(kScheme)) return std::nullopt;
  std::string_view address = endpoint.substr(kScheme.size());
  // "tcp://source;destination" connects; for a bind, the part after ';' is absent.
  if (const std::size_t semicolon = address.find(';'); semicolon != std::string_view::npos) {
    address = address.substr(semicolon + 1);
  }
  const std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = address.substr(0, colon);
  std::string_view portText = address.substr(colon + 1);
  if (portText == "*") portText = "0";  // ZeroMQ's "any free port"
  const std::optional<std::uint16_t> port = parsePort(portText);
  if (!port) return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return TcpHostPort{std::string(host), *port};
}

Result<UniqueFd> listenTcp(const std::string& host, std::uint16_t port, std::uint16_t& bound) {
  AddressList addresses;
  KILN_RETURN_IF_ERROR(resolve(host == "0.0.0.0" ? "*" : host, port, true, addresses));
  const addrinfo& address = *addresses.head;
  UniqueFd fd(::socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return internalError(fmt::format("socket: {}", errnoText()));
  const int on = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (::bind(fd.get(), address.ai_addr, address.ai_addrlen) != 0 || ::listen(fd.get(), 64) != 0) {
    return invalidArgument(fmt::format("cannot listen on {}:{}: {}", host, port, errnoText()));
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    return internalError(fmt::format("getsockname: {}", errnoText()));
  }
  bound = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return fd;
}

Result<UniqueFd> connectTcp(const std::string& host, std::uint16_t port, TimePoint deadline) {
  AddressList addresses;
  KILN_RETURN_IF_ERROR(resolve(host, port, false, addresses));
  const addrinfo& address = *addresses.head;
  UniqueFd fd(::socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return internalError(fmt::format("socket: {}", errnoText()));
  tuneTcpStream(fd.get());
  if (::connect(fd.get(), address.ai_addr, address.ai_addrlen) != 0 && errno != EINPROGRESS) {
    return disconnected(fmt::format("cannot connect to {}:{}: {}", host, port, errnoText()));
  }
  for (;;) {
    pollfd item{fd.get(), POLLOUT, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return disconnected(fmt::format("cannot connect to {}:{} in time", host, port));
    }
    const int ready =
        ::poll(&item, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return internalError(fmt::format("poll: {}", errnoText()));
    if (ready <= 0) continue;
    int error = 0;
    socklen_t size = sizeof(error);
    (void)::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
    if (error != 0) {
      return disconnected(
          fmt::format("cannot connect to {}:{}: {}", host, port, std::strerror(error)));
    }
    return fd;
  }
}

void tuneTcpStream(int fd) {
  const int on = 1, idle = 10, interval = 5, probes = 3;
  const unsigned userTimeoutMs = 20000;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  (void)::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeoutMs, sizeof(userTimeoutMs));
}

}  // namespace kiln
