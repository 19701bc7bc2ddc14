#include "bench/socket_floor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/base/spin_before_sleep.h"
#include "common/base/unique_fd.h"
#include "common/transport/tcp_stream.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kUnix = "unix:@";
constexpr std::string_view kTcp = "tcp:";

// A socket address for `endpoint`, and its length.
struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_UNSPEC;
};

Result<Address> parseEndpoint(const std::string& endpoint) {
  Address address;
  if (endpoint.starts_with(kUnix)) {
    std::string name = endpoint.substr(kUnix.size());
    auto* un = reinterpret_cast<sockaddr_un*>(&address.storage);
    if (name.empty() || name.size() + 1 > sizeof(un->sun_path)) {
      return invalidArgument("bad abstract socket name in '" + endpoint + "'");
    }
    un->sun_family = AF_UNIX;
    un->sun_path[0] = '\0';  // abstract: no file to remove afterwards
    std::memcpy(un->sun_path + 1, name.data(), name.size());
    address.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    address.family = AF_UNIX;
    return address;
  }
  const std::size_t colon = endpoint.rfind(':');
  if (endpoint.starts_with(kTcp) && colon > kTcp.size()) {
    const std::string host = endpoint.substr(kTcp.size(), colon - kTcp.size());
    const std::optional<std::uint16_t> port =
        parsePort(std::string_view(endpoint).substr(colon + 1));
    if (!port) return invalidArgument("bad port in '" + endpoint + "'");
    auto* in = reinterpret_cast<sockaddr_in*>(&address.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(*port);
    if (::inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1) {
      return invalidArgument("bad IPv4 address in '" + endpoint + "'");
    }
    address.length = sizeof(sockaddr_in);
    address.family = AF_INET;
    return address;
  }
  return invalidArgument("an echo endpoint is unix:@<name> or tcp:<IPv4>:<port>, got '" + endpoint +
                         "'");
}

// Small requests leave at once (no Nagle delay), as kiln's own sockets do.
void tuneStream(int fd, int family, Waiting waiting) {
  if (family == AF_INET) {
    int on = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  }
  if (waiting == Waiting::kPolling) {
    (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}

bool wouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// Writes all of `data`; spins where the socket is non-blocking and full.
Status writeAll(int fd, const char* data, std::size_t size, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::send(fd, data + done, size - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && wouldBlock()) {
      if (Clock::now() > deadline) return timeoutError("the echo did not take the request");
    } else {
      return disconnected(fmt::format("the echo went away: {}", std::strerror(errno)));
    }
  }
  return okStatus();
}

// Reads exactly `size` bytes; spins on a non-blocking socket.
Status readExactly(int fd, char* data, std::size_t size, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::recv(fd, data + done, size - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && wouldBlock()) {
      if (Clock::now() > deadline) return timeoutError("the echo did not answer");
    } else {
      return disconnected("the echo closed the connection");
    }
  }
  return okStatus();
}

}  // namespace

Result<StreamFloor> measureStreamFloor(const StreamFloorOptions& o) {
  KILN_ASSIGN_OR_RETURN(Address address, parseEndpoint(o.endpoint));
  UniqueFd fd(::socket(address.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return internalError("no socket for the floor's client");
  // A blocking read that never returns would hang the bench: 5 s at most.
  timeval patience{5, 0};
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address.storage), address.length) !=
      0) {
    return disconnected(
        fmt::format("cannot reach the echo at {}: {}", o.endpoint, std::strerror(errno)));
  }
  tuneStream(fd.get(), address.family, o.waiting);
  std::string request(o.payloadBytes, 'x');
  std::string reply(o.payloadBytes, '\0');
  std::vector<std::int64_t> nanos;
  nanos.reserve(o.samples);
  const auto limit = Clock::now() + std::chrono::duration<double>(o.seconds);
  auto begin = Clock::now();
  for (unsigned i = 0; i < o.samples + 100 && Clock::now() < limit; ++i) {
    if (i == 100) begin = Clock::now();
    auto sent = Clock::now();
    auto deadline = sent + std::chrono::seconds(5);
    KILN_RETURN_IF_ERROR(writeAll(fd.get(), request.data(), request.size(), deadline));
    KILN_RETURN_IF_ERROR(readExactly(fd.get(), reply.data(), reply.size(), deadline));
    if (i >= 100) {
      nanos.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - sent).count());
    }
  }
  if (nanos.empty()) return timeoutError("no round trip to the echo completed in time");
  StreamFloor floor;
  floor.perSecond = nanos.size() / std::chrono::duration<double>(Clock::now() - begin).count();
  floor.nanos = nanos;
  floor.latency = summarize(nanos);
  return floor;
}

namespace {

// Whether a request is readable on `fd` now, without taking it.
bool requestWaiting(int fd) {
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

}  // namespace

int runStreamEchoServer(const std::string& listen, Waiting waiting, Duration spinAfterReply) {
  auto address = parseEndpoint(listen);
  if (!address.ok()) {
    std::fprintf(stderr, "%s\n", address.status().toString().c_str());
    return 1;
  }
  UniqueFd listener(::socket(address->family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int on = 1;
  (void)::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (listener.get() < 0 ||
      ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address->storage),
             address->length) != 0 ||
      ::listen(listener.get(), 4) != 0) {
    std::fprintf(stderr, "the echo cannot listen on %s: %s\n", listen.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::string endpoint = listen;
  if (address->family == AF_INET) {
    sockaddr_in bound{};
    socklen_t length = sizeof(bound);
    (void)::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &length);
    endpoint = fmt::format("{}{}", listen.substr(0, listen.rfind(':') + 1), ntohs(bound.sin_port));
  }
  std::printf("echo %s\n", endpoint.c_str());
  std::fflush(stdout);
  std::vector<char> buffer(1 << 16);
  for (;;) {
    UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (peer.get() < 0) continue;
    tuneStream(peer.get(), address->family, waiting);
    SpinBeforeSleep spin = SpinBeforeSleep::forThisThread(spinAfterReply);
    bool replied = false;
    for (;;) {
      if (replied && waiting == Waiting::kBlocking) {
        if (const Duration window = spin.next(); window > Duration::zero()) {
          const int fd = peer.get();
          spin.outcome(pollFor(window, [fd] { return requestWaiting(fd); }) ==
                       PollResult::kArrived);
        }
      }
      ssize_t n = ::recv(peer.get(), buffer.data(), buffer.size(), 0);
      if (n < 0 && wouldBlock()) continue;  // polling: spin until the next request
      if (n <= 0) break;                    // the client is done
      auto patience = Clock::now() + std::chrono::seconds(5);
      if (!writeAll(peer.get(), buffer.data(), static_cast<std::size_t>(n), patience).ok()) break;
      replied = true;
    }
  }
}

}  // namespace kiln::bench
