#include "client/zmq_channel.h"

#include <fmt/format.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/base/wire_convert.h"
#include "common/transport/abstract_socket.h"
#include "common/transport/tcp_stream.h"
#include "common/transport/zmtp_heartbeat.h"

namespace kiln::client {

ZmqChannel::ZmqChannel(zmq::context_t& zmq, std::string endpoint, const RequestIdentity& identity,
                       FrameLimits limits, std::string address, std::optional<ClusterKeys> keys)
    : Channel(std::move(endpoint), identity, limits),
      zmq_(zmq),
      keys_(std::move(keys)),
      address_(address.empty() ? this->endpoint() : std::move(address)),
      directReader_(limits.maxMessageBytes),
      maxMessageBytes_(limits.maxMessageBytes),
      refusalMeansGone_(address_.starts_with("ipc://@")) {
  curve_ = keys_.has_value();
  openSocket();
}

void ZmqChannel::openSocket() {
  socket_ = zmq::socket_t(zmq_, zmq::socket_type::dealer);
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::sndhwm, kSendQueueMessages);
  socket_.set(zmq::sockopt::rcvhwm, 100000);
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(maxMessageBytes_));
  // A peer that vanishes without closing (node gone, SIGSTOP) is detected by
  // ZMTP heartbeats: no answer for 3 s drops the connection.
  applyZmtpHeartbeats(socket_);
  if (keys_) applyCurveClient(socket_, *keys_);
  std::string monitorAddress =
      fmt::format("inproc://kiln-channel-{}-{}", static_cast<void*>(this), ++socketGeneration_);
  // Retries are watched only where a refusal means the peer is gone (see
  // readEvents): elsewhere they are ten events a second for as long as a dead
  // endpoint is retried, which nobody needs.
  const int retries = refusalMeansGone_ ? ZMQ_EVENT_CONNECT_RETRIED : 0;
  if (zmq_socket_monitor(socket_.handle(), monitorAddress.c_str(),
                         ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | retries |
                             ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) == 0) {
    monitor_ = zmq::socket_t(zmq_, zmq::socket_type::pair);
    monitor_.set(zmq::sockopt::linger, 0);
    // ZeroMQ's I/O thread sends monitor events with a blocking send: with a
    // bounded queue, a channel whose events nobody reads (one to a worker
    // that died, never used again) would, after a thousand of them, stop
    // that thread, and with it every socket of this client. No bound on our
    // side makes the queue unbounded; readEvents() keeps it short.
    monitor_.set(zmq::sockopt::rcvhwm, 0);
    monitor_.connect(monitorAddress);
  }
  pollItems();
  // readEvents() always reads the monitor dry, starting now: its descriptor
  // alone tells when events come.
  readEvents();
  socket_.connect(address_);
}

bool ZmqChannel::pipeGone() {
  // ZeroMQ keeps a pipe to a peer it connects to from connect() on, also
  // while it reconnects: with none left, nothing can be sent (no POLLOUT).
  return (socket_.get(zmq::sockopt::events) & ZMQ_POLLOUT) == 0;
}

void ZmqChannel::closeSocket() {
  // Stop the monitor before its PAIR socket goes away.
  if (monitor_) zmq_socket_monitor(socket_.handle(), nullptr, 0);
  monitor_.close();
  socket_.close();
}

void ZmqChannel::pollItems() {
  poll_.clear();
  // Once direct, nothing comes over ZeroMQ but the monitor's events (replies
  // to earlier requests were all taken: openDirect() needs none outstanding).
  if (!direct()) socketIndex_ = poll_.addSocket(socket_);
  if (monitor_) monitorIndex_ = poll_.addSocket(monitor_, SocketUse::kDrainedOnly);
  if (direct()) directIndex_ = poll_.addFd(directFd_);
}

ZmqChannel::~ZmqChannel() {
  closeSocket();
  if (directFd_ >= 0) ::close(directFd_);
}

Status ZmqChannel::openDirect(Duration timeout) {
  if (direct()) return okStatus();
  if (outstanding() != 0) {
    return invalidArgument("a direct channel is opened before any request is outstanding");
  }
  const TimePoint deadline = std::chrono::steady_clock::now() + timeout;
  capnp::MallocMessageBuilder builder(64);
  begin(builder, timeout)
      .initRequest()
      .initOpenDirect()
      .setAcrossHosts(!address_.starts_with("ipc://"));
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, call(builder, timeout));
  auto envelope = reply.envelope();
  if (!envelope.getReply().isDirectOpened()) {
    return internalError(fmt::format("{} answered OpenDirect with something else", endpoint()));
  }
  auto opened = envelope.getReply().getDirectOpened();
  auto token = opened.getToken();
  return connectDirect(opened.getAddress().cStr(),
                       std::string(reinterpret_cast<const char*>(token.begin()), token.size()),
                       deadline);
}

Result<UniqueFd> ZmqChannel::connectDirectSocket(const std::string& address, TimePoint deadline) {
  const auto invalid = [&] {
    return invalidArgument(
        fmt::format("{} offered a direct channel at an invalid address '{}'", endpoint(), address));
  };
  if (auto tcp = splitTcpEndpoint(address)) {
    // Its port, on the host this client already reaches the worker at.
    auto reached = splitTcpEndpoint(endpoint());
    if (!reached || tcp->port == 0) return invalid();
    auto connected = connectTcp(reached->host, tcp->port, deadline);
    if (!connected.ok()) {
      return disconnected(fmt::format("cannot connect to {}'s direct channel: {}", endpoint(),
                                      connected.status().message()));
    }
    return connected;
  }
  // Else only abstract sockets ("@name"): a worker names no file for a client to open.
  if (!address.starts_with('@')) return invalid();
  auto target = abstractAddress(std::string_view(address).substr(1));
  if (!target.ok()) return invalid();
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return internalError(fmt::format("socket: {}", std::strerror(errno)));
  // A local stream socket connects at once or fails (EAGAIN: backlog full).
  if (::connect(fd.get(), target->get(), target->size) != 0) {
    return disconnected(fmt::format("cannot connect to {}'s direct channel {}: {}", endpoint(),
                                    address, std::strerror(errno)));
  }
  return fd;
}

Status ZmqChannel::connectDirect(const std::string& address, const std::string& token,
                                 TimePoint deadline) {
  KILN_ASSIGN_OR_RETURN(UniqueFd connected, connectDirectSocket(address, deadline));
  const int fd = connected.release();
  StreamFrameWriter hello;
  hello.queue(token.data(), token.size());
  Status sent = hello.flushUntil(fd, deadline);
  if (!sent.ok()) {
    ::close(fd);
    return sent;
  }
  directFd_ = fd;
  pollItems();
  return okStatus();
}

void ZmqChannel::readEvents() {
  if (!monitor_) return;
  zmq::message_t event;
  while (monitor_.recv(event, zmq::recv_flags::dontwait)) {
    // Each event is two frames: (uint16 event, uint32 value) and the address.
    zmq::message_t address;
    (void)monitor_.recv(address, zmq::recv_flags::dontwait);
    if (event.size() < sizeof(std::uint16_t) + sizeof(std::uint32_t)) continue;
    std::uint16_t kind;
    std::uint32_t value;
    std::memcpy(&kind, event.data(), sizeof(kind));
    std::memcpy(&value, static_cast<const char*>(event.data()) + sizeof(kind), sizeof(value));
    if (isHandshakeFailure(kind)) {
      // Refused, not lost: the drop that follows must not look like a dead
      // server (which would start a restore elsewhere). A failure without
      // detail also happens when the server closes first (a refusal racing
      // our hello), so only repeated ones count; a clearer event usually
      // follows on the reconnect, 100 ms later.
      connected_ = false;
      if (handshaken_) {
        // Our server accepted us before: whatever refuses us at its address
        // now is another process that took the port of a dead one. Lost.
        lost_ = true;
        continue;
      }
      bool detailed = kind != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
      if (detailed || ++vagueFailures_ >= 4) {
        refused_ = handshakeRefusal(kind, value, endpoint(), curve_);
      }
    } else if (kind == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      refused_ = okStatus();
      vagueFailures_ = 0;
      handshaken_ = true;
    } else if (kind == ZMQ_EVENT_CONNECTED) {
      connected_ = true;
      connectedAddress_.assign(static_cast<const char*>(address.data()), address.size());
      lost_ = false;
    } else if (kind == ZMQ_EVENT_DISCONNECTED && connected_) {
      lost_ = true;
      dropDirect();
    } else if (kind == ZMQ_EVENT_CONNECT_RETRIED && refusalMeansGone_) {
      // A worker's abstract socket exists while its process lives, and its
      // name (pid and nonce) is never used again: refused, it is gone. Else
      // a request to a worker that died before this channel first connected
      // would wait out its whole deadline. Nothing will ever listen there
      // again: stop retrying (and making events).
      lost_ = true;
      (void)zmq_disconnect(socket_.handle(), address_.c_str());
    }
  }
}

Result<std::uint64_t> ZmqChannel::send(capnp::MessageBuilder& builder) {
  // Refused here, not cut by ZeroMQ: the caller's mistake, not a lost worker.
  KILN_RETURN_IF_ERROR(checkRequestSize(builder));
  auto envelope = builder.getRoot<wire::Envelope>();
  std::uint64_t id = envelope.getRequestId();
  // A drop ends the direct stream (readEvents); once ZeroMQ has reconnected,
  // the first request with nothing outstanding asks for a new one.
  if (lost_) readEvents();
  if (reopenDirect_ && connected_ && !lost_ && outstanding() == 0) {
    reopenDirect_ = false;
    (void)openDirect(std::min<Duration>(
        std::chrono::milliseconds(std::max(1u, envelope.getTimeoutMs())), kReopenDirectTimeout));
  }
  if (direct()) {
    if (lost_) return disconnected(fmt::format("cannot send to {}: it is gone", endpoint()));
    directWriter_.queue(builder);
    Status sent = directWriter_.flushUntil(
        directFd_, std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(std::max(1u, envelope.getTimeoutMs())));
    if (!sent.ok()) {
      // Gone (the stream broke), or alive but not taking it (its buffer full).
      lost_ = sent.code() == ErrorCode::kDisconnected;
      std::string why = fmt::format("cannot send to {}: {}", endpoint(), sent.message());
      return lost_ ? disconnected(std::move(why)) : overloaded(std::move(why));
    }
    expect(id);
    return id;
  }
  zmq::message_t frame = encodeFrame(builder);
  auto sent = socket_.send(frame, zmq::send_flags::dontwait);
  if (!sent && monitor_ && !handshaken_) {
    // Never connected yet: a handshake that failed (a keyed client of a
    // plaintext server, a wrong key) leaves nothing to queue on until the
    // monitor says why, which may take a few reconnects. Wait for that, or
    // for the connection, within the request's timeout (at most 2 s).
    const auto until = std::chrono::steady_clock::now() +
                       std::min<std::chrono::milliseconds>(
                           std::chrono::milliseconds(std::max(1u, envelope.getTimeoutMs())),
                           std::chrono::seconds(2));
    while (!sent && refused_.ok() && !lost_ && std::chrono::steady_clock::now() < until) {
      zmq::pollitem_t events{monitor_.handle(), 0, ZMQ_POLLIN, 0};
      (void)zmq::poll(&events, 1, std::chrono::milliseconds(20));
      readEvents();
      sent = socket_.send(frame, zmq::send_flags::dontwait);
    }
    if (!sent && !refused_.ok()) return refused_;
  }
  if (!sent && outstanding() == 0 && (pipeDropped_ || (connected_ && !peerLost()))) {
    // Connected, by every event ZeroMQ sent, and nothing waiting here, yet
    // nowhere to queue: ZeroMQ has dropped its pipe to this peer without a
    // word and will never connect again (seen after a worker was frozen
    // and woke; libzmq#4693 reports the same for PUSH). A new socket starts
    // over; nothing is lost, as no request waits on the old one.
    closeSocket();
    connected_ = false;
    lost_ = false;
    pipeDropped_ = false;
    openSocket();
    sent = socket_.send(frame, zmq::send_flags::dontwait);
  }
  if (!sent) {
    // Nothing is queued for a peer known to be gone: say so, not "full".
    if (peerLost()) {
      return disconnected(fmt::format("cannot send to {}: the connection dropped", endpoint()));
    }
    return overloaded(fmt::format("cannot send to {}: its queue is full", endpoint()));
  }
  expect(id);
  return id;
}

Result<InboundMessage> ZmqChannel::await(std::uint64_t requestId, TimePoint deadline) {
  if (auto early = takeArrived(requestId)) return std::move(*early);
  if (!isPending(requestId)) {
    return invalidArgument(fmt::format("request {} is not outstanding", requestId));
  }
  // Replies are read when the socket says it has some, and the monitor when
  // it has events: an idle channel costs one poll per wait, not a round of
  // empty reads. A reply that came before a drop is still delivered.
  bool socketReady = false;
  bool monitorReady = lost_ || !refused_.ok();  // it may have come back since
  bool directReady = false;  // what was read is taken: the socket says when more comes
  bool spun = false;
  for (;;) {
    if (monitorReady) {
      readEvents();
      // A drop keeps what the direct stream held (dropDirect): a worker
      // that answered and then stopped (a drain) answered this one.
      if (auto kept = takeArrived(requestId)) return std::move(*kept);
    }
    if (directReady) {
      if (auto reply = readDirect(requestId)) return std::move(*reply);
    }
    if (socketReady || lost_ || !refused_.ok()) {
      zmq::message_t frame;
      while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
        if (auto reply = take(frame.data(), frame.size(), requestId)) return std::move(*reply);
      }
    }
    if (!refused_.ok()) {
      forget(requestId);
      return refused_;
    }
    if (lost_) {
      forget(requestId);
      return disconnected(
          fmt::format("the connection to {} dropped (the worker died, restarted or is unreachable)",
                      endpoint()));
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      forget(requestId);
      return timeoutError(
          fmt::format("{} did not answer in time (worker busy, gone or unreachable)", endpoint()));
    }
    if (direct() && !spun) {
      spun = true;
      if (auto reply = spinForReply(requestId)) return std::move(*reply);
      if (lost_) continue;
    }
    // Waited in slices: a pipe that ZeroMQ drops without an event (see
    // send()) is seen within one, not at the deadline.
    poll_.wait(std::min<std::chrono::milliseconds>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
            std::chrono::milliseconds(1),
        kPipeCheckEvery));
    socketReady = !direct() && poll_.ready(socketIndex_);
    monitorReady = monitor_ && poll_.ready(monitorIndex_);
    directReady = direct() && poll_.ready(directIndex_);
    if (!socketReady && !monitorReady && !directReady && !direct() && !lost_ && pipeGone()) {
      // What was sent is gone with the pipe: the requests fail now, their
      // sessions are restored, and the next send starts over on a new socket.
      lost_ = true;
      pipeDropped_ = true;
    }
  }
}

void ZmqChannel::readAvailable() {
  readEvents();
  if (direct()) {
    (void)readDirect(kNoRequest);
    return;
  }
  zmq::message_t frame;
  while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
    (void)take(frame.data(), frame.size(), kNoRequest);
  }
}

bool ZmqChannel::replyReady(std::uint64_t requestId) {
  return hasArrived(requestId) || !isPending(requestId) || lost_ || !refused_.ok();
}

void ZmqChannel::addTo(ReadinessPoll& poll) {
  if (direct()) {
    poll.addFd(directFd_);
  } else {
    poll.addSocket(socket_);
  }
  if (monitor_) poll.addSocket(monitor_);
}

void ZmqChannel::dropDirect() {
  if (!direct()) return;
  (void)readDirect(kNoRequest);  // replies that came before the drop are kept
  ::close(directFd_);
  directFd_ = -1;
  directReader_ = StreamFrameReader(maxMessageBytes_);
  directWriter_ = StreamFrameWriter{};
  reopenDirect_ = true;
  pollItems();
}

std::optional<Result<InboundMessage>> ZmqChannel::readDirect(std::uint64_t requestId) {
  // Every frame is taken, also after the one asked for: none may be lost.
  std::optional<Result<InboundMessage>> wanted;
  const Status read = directReader_.readAvailable(directFd_, [&](std::string_view frame) {
    auto reply = take(frame.data(), frame.size(), requestId);
    if (reply) wanted = std::move(reply);
  });
  // The worker closes its end only when its process ends (or when this
  // client broke the protocol): the server is gone.
  if (!read.ok()) lost_ = true;
  return wanted;
}

std::optional<Result<InboundMessage>> ZmqChannel::spinForReply(std::uint64_t requestId) {
  const Duration window = replySpin_.next();
  if (window <= Duration::zero()) return std::nullopt;
  std::optional<Result<InboundMessage>> reply;
  const PollResult polled = pollFor(window, [&] {
    reply = readDirect(requestId);
    return reply.has_value() || lost_;
  });
  replySpin_.outcome(polled == PollResult::kArrived && reply.has_value());
  return reply;
}

ZmqKeepAliveSender::ZmqKeepAliveSender(zmq::context_t& zmq, std::optional<ClusterKeys> keys)
    : zmq_(zmq), keys_(std::move(keys)) {}

void ZmqKeepAliveSender::ping(const std::vector<std::string>& workers,
                              const std::string& coordinator, const RequestIdentity& identity) {
  std::vector<std::string> endpoints = workers;
  if (!coordinator.empty()) endpoints.push_back(coordinator);
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const std::string& endpoint = endpoints[i];
    auto [it, inserted] = sockets_.try_emplace(endpoint, zmq_, zmq::socket_type::dealer);
    if (inserted) {
      it->second.set(zmq::sockopt::linger, 0);
      if (keys_) applyCurveClient(it->second, *keys_);
      try {
        it->second.connect(endpoint);
      } catch (const zmq::error_t&) {
        sockets_.erase(it);  // not an address: nothing to keep alive there
        continue;
      }
    }
    // Replies are read and dropped only to keep the receive queue short.
    zmq::message_t ignored;
    while (it->second.recv(ignored, zmq::recv_flags::dontwait)) {
    }
    capnp::MallocMessageBuilder builder(64);
    auto envelope = initEnvelope(builder, 0);
    if (i < workers.size()) {
      identity.stampForWorker(envelope, endpoint);
    } else {
      identity.stamp(envelope);
    }
    envelope.initRequest().initKeepAlive();
    (void)it->second.send(encodeFrame(builder), zmq::send_flags::dontwait);
  }
  std::erase_if(sockets_, [&](const auto& entry) {
    return std::find(endpoints.begin(), endpoints.end(), entry.first) == endpoints.end();
  });
}

ZmqChannelFactory::ZmqChannelFactory(std::optional<ClusterKeys> keys) : keys_(std::move(keys)) {}

ZmqChannelFactory::~ZmqChannelFactory() = default;

Result<std::unique_ptr<Channel>> ZmqChannelFactory::open(const std::string& endpoint,
                                                         const std::string& address,
                                                         const RequestIdentity& identity,
                                                         const FrameLimits& limits) {
  try {
    return std::unique_ptr<Channel>(
        std::make_unique<ZmqChannel>(zmq_, endpoint, identity, limits, address, keys_));
  } catch (const zmq::error_t& e) {
    return invalidArgument(fmt::format("ZeroMQ cannot connect to '{}': {}",
                                       address.empty() ? endpoint : address, e.what()));
  }
}

std::unique_ptr<KeepAliveSender> ZmqChannelFactory::keepAliveSender() {
  return std::make_unique<ZmqKeepAliveSender>(zmq_, keys_);
}

}  // namespace kiln::client
