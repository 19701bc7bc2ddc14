#include "worker/direct_channels.h"

#include <fmt/format.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "common/transport/abstract_socket.h"
#include "common/transport/frame_prefix.h"
#include "common/transport/tcp_stream.h"

namespace kiln {
namespace {

constexpr std::size_t kTokenBytes = 16;
constexpr char kRoutePrefix[] = "\0direct-";
constexpr std::size_t kRoutePrefixSize = sizeof(kRoutePrefix) - 1;

// The answer to a request over the worker's message limit.
Status oversized(std::size_t length, const FrameLimits& limits) {
  return oversizedRequest(length, limits.maxMessageBytes);
}

Result<std::string> randomToken() {
  std::string token(kTokenBytes, '\0');
  std::size_t filled = 0;
  while (filled < token.size()) {
    const ssize_t got = ::getrandom(token.data() + filled, token.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return internalError(fmt::format("getrandom: {}", std::strerror(errno)));
    filled += static_cast<std::size_t>(got);
  }
  return token;
}

}  // namespace

Result<DirectTcp> parseDirectTcp(std::string_view text) {
  if (text == "auto") return DirectTcp{};
  if (text == "off") return DirectTcp{false, 0};
  const std::optional<std::uint16_t> port = parsePort(text);
  if (!port || *port == 0) {
    return invalidArgument(
        fmt::format("--direct-tcp is 'auto', 'off' or a port from 1 to 65535, not '{}'", text));
  }
  return DirectTcp{true, *port};
}

DirectChannels::DirectChannels(FrameLimits limits, const Clock& clock, Logger logger)
    : limits_(limits), clock_(clock), logger_(std::move(logger)) {
  tcp_.tcp = true;
}

DirectChannels::~DirectChannels() {
  for (auto& [serial, connection] : connections_) ::close(connection.fd);
}

Status DirectChannels::listenLocal(const std::string& name) {
  KILN_ASSIGN_OR_RETURN(AbstractAddress address, abstractAddress(name));
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return internalError(fmt::format("socket: {}", std::strerror(errno)));
  if (::bind(fd.get(), address.get(), address.size) != 0 || ::listen(fd.get(), 64) != 0) {
    return invalidArgument(
        fmt::format("cannot listen for direct channels on @{}: {}", name, std::strerror(errno)));
  }
  local_.fd = std::move(fd);
  local_.address = "@" + name;
  return okStatus();
}

Status DirectChannels::listenTcp(const std::string& host, std::uint16_t port) {
  std::uint16_t bound = 0;
  KILN_ASSIGN_OR_RETURN(tcp_.fd, kiln::listenTcp(host, port, bound));
  tcp_.address = fmt::format("tcp://{}:{}", host, bound);
  return okStatus();
}

Result<DirectGrant> DirectChannels::grant(bool acrossHosts) {
  const Listener& listener = acrossHosts ? tcp_ : local_;
  if (listener.fd.get() < 0) {
    return unimplemented(acrossHosts ? "this worker offers no direct channel across hosts"
                                     : "this worker offers no same-host direct channel");
  }
  const TimePoint now = clock_.now();
  std::erase_if(tokens_, [now](const auto& entry) { return entry.second <= now; });
  if (tokens_.size() >= kMaxConnections) {
    return overloaded("too many direct channels are being opened on this worker");
  }
  KILN_ASSIGN_OR_RETURN(std::string token, randomToken());
  tokens_.emplace(token, now + kTokenLifetime);
  return DirectGrant{listener.address, std::move(token)};
}

bool DirectChannels::isDirectRoute(const std::string& route) {
  return route.size() > kRoutePrefixSize &&
         route.compare(0, kRoutePrefixSize, kRoutePrefix, kRoutePrefixSize) == 0;
}

std::string DirectChannels::routeOf(std::uint64_t serial) {
  return std::string(kRoutePrefix, kRoutePrefixSize) + std::to_string(serial);
}

void DirectChannels::addTo(ReadinessPoll& poll) {
  for (Listener* listener : {&local_, &tcp_}) {
    if (listener->fd.get() >= 0) listener->pollIndex = poll.addFd(listener->fd.get());
  }
  polled_.clear();
  for (auto& [serial, connection] : connections_) {
    const short events = connection.writer.pending() ? POLLIN | POLLOUT : POLLIN;
    polled_.emplace_back(serial, poll.addFd(connection.fd, events));
  }
}

void DirectChannels::onReady(const ReadinessPoll& poll, const Deliver& deliver) {
  const TimePoint now = clock_.now();
  for (const auto& [serial, index] : polled_) {
    auto found = connections_.find(serial);
    if (found == connections_.end()) continue;  // closed while delivering an earlier one
    Connection& connection = found->second;
    if (!connection.authenticated && now - connection.acceptedAt > kTokenLifetime) {
      close(serial, "it sent no token in time");
      continue;
    }
    if (!poll.ready(index)) continue;
    if (connection.writer.pending()) {
      Status flushed = connection.writer.flush(connection.fd);
      if (!flushed.ok()) {
        closeFailed(serial, connection, flushed);
        continue;
      }
    }
    (void)readFrom(serial, connection, deliver);
  }
  polled_.clear();
  for (const Listener* listener : {&local_, &tcp_}) {
    if (listener->fd.get() >= 0 && poll.ready(listener->pollIndex)) acceptAll(*listener);
  }
}

bool DirectChannels::admit(const Listener& listener, int fd) {
  if (connections_.size() >= kMaxConnections) {
    logger_->warn("direct channel: refused a connection on {}: {} are open already",
                  listener.address, connections_.size());
    return false;
  }
  if (listener.tcp) {
    tuneTcpStream(fd);
    return true;  // the token alone says who may stay
  }
  ucred peer{};
  socklen_t size = sizeof(peer);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || peer.uid != ::geteuid()) {
    logger_->warn("direct channel: refused a connection from uid {} (only uid {} may connect)",
                  peer.uid, ::geteuid());
    return false;
  }
  return true;
}

void DirectChannels::acceptAll(const Listener& listener) {
  for (;;) {
    const int fd = ::accept4(listener.fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        logger_->warn("direct channel: accept failed: {}", std::strerror(errno));
      }
      return;
    }
    if (!admit(listener, fd)) {
      ::close(fd);
      continue;
    }
    const std::uint64_t serial = nextSerial_++;
    connections_.emplace(serial, Connection{fd,
                                            StreamFrameReader(limits_.maxMessageBytes),
                                            StreamFrameWriter{},
                                            false,
                                            clock_.now(),
                                            {},
                                            routeOf(serial),
                                            listener.tcp});
  }
}

bool DirectChannels::readHello(std::uint64_t serial, Connection& connection) {
  // Exactly the token's frame and no byte more: what follows stays in the
  // socket for the frame reader, and a peer without a token can make the
  // worker hold 20 bytes, not a frame of the full size limit.
  const std::size_t helloBytes = sizeof(std::uint32_t) + kTokenBytes;
  char bytes[sizeof(std::uint32_t) + kTokenBytes];
  const ssize_t got =
      ::recv(connection.fd, bytes, helloBytes - connection.hello.size(), MSG_DONTWAIT);
  if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  if (got <= 0) {
    close(serial, "it closed before sending its token");
    return false;
  }
  connection.hello.append(bytes, static_cast<std::size_t>(got));
  // The length says at once whether a token follows.
  const std::string expected{static_cast<char>(kTokenBytes), '\0', '\0', '\0'};
  const std::size_t header = std::min(connection.hello.size(), expected.size());
  if (connection.hello.compare(0, header, expected, 0, header) != 0) {
    close(serial, "its first frame is not a token");
    return false;
  }
  if (connection.hello.size() < helloBytes) return true;
  if (!authenticate(connection, connection.hello.substr(expected.size()))) {
    close(serial, "it sent a wrong or expired token");
    return false;
  }
  connection.hello.clear();
  return true;
}

bool DirectChannels::readFrom(std::uint64_t serial, Connection& connection,
                              const Deliver& deliver) {
  if (!connection.authenticated) {
    if (!readHello(serial, connection)) return false;
    if (!connection.authenticated) return true;  // the rest of the token comes later
  }
  // Decoded while reading (the one copy, into aligned words), delivered
  // after: a delivery may close this connection and free its reader.
  Batch batch = std::move(spareBatch_);
  batch.clear();
  const Status read = connection.reader.readAvailable(
      connection.fd,
      [&](std::string_view frame) {
        batch.push_back({0, InboundMessage::decode(frame.data(), frame.size(), limits_)});
      },
      [&](std::string_view prefix, std::size_t length) {
        // Read past, not buffered, and answered: the client learns what was
        // wrong instead of losing its channel (issue 48: it heard
        // "overloaded: retry later").
        batch.push_back({requestIdFromPrefix(prefix), oversized(length, limits_)});
      });
  const std::string route = connection.route;
  for (auto& [requestId, message] : batch) {
    if (message.ok()) {
      deliver(route, std::move(message).value());
    } else {
      send(route, encodeErrorReply(requestId, message.status()));
    }
    // A reply that failed to leave closed the connection: look it up again.
    if (connections_.find(serial) == connections_.end()) return false;
  }
  batch.clear();
  spareBatch_ = std::move(batch);
  if (!read.ok()) {
    closeFailed(serial, connection, read);
    return false;
  }
  return true;
}

bool DirectChannels::readLastReplied(const Deliver& deliver) {
  auto found = connections_.find(lastReplied_);
  // A reply still queued waits for the poll (POLLOUT) to leave.
  if (found == connections_.end() || found->second.writer.pending()) return false;
  bool delivered = false;
  const bool open =
      readFrom(lastReplied_, found->second, [&](const std::string& route, InboundMessage message) {
        delivered = true;
        deliver(route, std::move(message));
      });
  return delivered || !open;
}

bool DirectChannels::authenticate(Connection& connection, const std::string& token) {
  auto found = tokens_.find(token);
  if (found == tokens_.end()) return false;
  const bool live = found->second > clock_.now();
  tokens_.erase(found);  // single use, live or not
  connection.authenticated = live;
  return live;
}

void DirectChannels::send(const std::string& route, const zmq::message_t& frame) {
  if (!isDirectRoute(route)) return;
  const std::uint64_t serial = std::strtoull(route.c_str() + kRoutePrefixSize, nullptr, 10);
  auto found = connections_.find(serial);
  if (found == connections_.end()) return;
  Connection& connection = found->second;
  if (pollsAfterReply(connection.acrossHosts)) {
    ++repliesSent_;
    lastReplied_ = serial;
  }
  connection.writer.queue(frame.data(), frame.size());
  Status flushed = connection.writer.flush(connection.fd);
  if (!flushed.ok()) closeFailed(serial, connection, flushed);
}

void DirectChannels::flushAll(Duration budget) {
  const TimePoint deadline = std::chrono::steady_clock::now() + budget;
  for (auto& [serial, connection] : connections_) {
    if (connection.writer.pending()) (void)connection.writer.flushUntil(connection.fd, deadline);
  }
}

void DirectChannels::closeFailed(std::uint64_t serial, const Connection& connection,
                                 const Status& why) {
  // A client that goes away closes its end, and reads and writes on it then
  // fail (a reply to a client that just exited: EPIPE): that is no news.
  close(serial, why.message(), connection.authenticated && why.code() == ErrorCode::kDisconnected);
}

void DirectChannels::close(std::uint64_t serial, const std::string& why, bool expected) {
  auto found = connections_.find(serial);
  if (found == connections_.end()) return;
  if (expected) {
    logger_->debug("direct channel {} closed: {}", serial, why);
  } else {
    logger_->warn("direct channel {} closed: {}", serial, why);
  }
  ::close(found->second.fd);
  connections_.erase(found);
}

}  // namespace kiln
