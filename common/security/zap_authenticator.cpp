#include "common/security/zap_authenticator.h"

#include "common/transport/frame.h"

#include <fmt/format.h>

#include <cstring>

namespace kiln {

namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr auto kQuietPeriod = std::chrono::seconds(10);
constexpr int kWatchedEvents = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_MONITOR_STOPPED;

std::string z85(const void* key32) {
  char text[41] = {};
  zmq_z85_encode(text, static_cast<const std::uint8_t*>(key32), 32);
  return text;
}

std::string text(const zmq::message_t& frame) {
  return std::string(frame.data<char>(), frame.size());
}

std::string describeProtocolError(std::uint32_t code) {
  switch (code) {
    case ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
      return "the peer has no cluster key (it speaks plaintext)";
    case ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC:
      return "the peer's key file is not this cluster's (CURVE decryption failed)";
    default:
      return fmt::format("the peer broke the handshake protocol (ZeroMQ error {:#x})", code);
  }
}

}  // namespace

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, Logger logger)
    : context_(context), logger_(std::move(logger)), handler_(context, zmq::socket_type::rep) {}

Result<std::unique_ptr<ZapAuthenticator>> ZapAuthenticator::start(
    zmq::context_t& context, const ClusterKeys& cluster,
    const std::vector<std::string>& alsoAuthorized, Logger logger) {
  std::unique_ptr<ZapAuthenticator> auth(new ZapAuthenticator(context, std::move(logger)));
  std::vector<std::string> keys = alsoAuthorized;
  keys.push_back(cluster.publicKey);
  for (const std::string& key : keys) {
    std::uint8_t binary[32];
    if (!isZ85Key(key) || zmq_z85_decode(binary, key.c_str()) == nullptr) {
      return invalidArgument(fmt::format("'{}' is not a 40-character Z85 public key", key));
    }
    auth->authorized_.emplace(reinterpret_cast<const char*>(binary), sizeof(binary));
    if (key == cluster.publicKey) {
      auth->clusterKey_.assign(reinterpret_cast<const char*>(binary), sizeof(binary));
    }
  }
  auth->handler_.set(zmq::sockopt::linger, 0);
  try {
    auth->handler_.bind(kZapEndpoint);
  } catch (const zmq::error_t& e) {
    return internalError(fmt::format(
        "cannot serve ZAP on this ZeroMQ context ({}): one authenticator per context", e.what()));
  }
  auth->thread_ = std::thread([a = auth.get()] { a->run(); });
  return auth;
}

ZapAuthenticator::~ZapAuthenticator() {
  stopping_.store(true);
  newWatches_.wake();
  if (thread_.joinable()) thread_.join();
}

void ZapAuthenticator::watch(zmq::socket_t& server, const std::string& role) {
  std::string address = fmt::format("inproc://kiln-zap-watch-{}-{}", static_cast<void*>(this),
                                    monitors_.fetch_add(1));
  if (zmq_socket_monitor(server.handle(), address.c_str(), kWatchedEvents) != 0) {
    logger_->warn("cannot watch the {} socket's handshakes: {}", role, zmq_strerror(zmq_errno()));
    return;
  }
  Watched watched{zmq::socket_t(context_, zmq::socket_type::pair), role};
  watched.monitor.set(zmq::sockopt::linger, 0);
  watched.monitor.connect(address);
  newWatches_.push(std::move(watched));
}

void ZapAuthenticator::run() {
  std::vector<Watched> watched;
  std::vector<zmq::pollitem_t> items;
  while (!stopping_.load()) {
    items.clear();
    items.push_back({handler_.handle(), 0, ZMQ_POLLIN, 0});
    items.push_back({nullptr, newWatches_.fd(), ZMQ_POLLIN, 0});
    for (Watched& w : watched) items.push_back({w.monitor.handle(), 0, ZMQ_POLLIN, 0});
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(250));
    if (items[0].revents & ZMQ_POLLIN) answer();
    std::vector<bool> stopped(watched.size(), false);
    for (std::size_t i = 0; i < watched.size(); ++i) {
      bool ended = false;
      if (items[2 + i].revents & ZMQ_POLLIN) readEvents(watched[i], ended);
      stopped[i] = ended;
    }
    // A closed server socket ends its monitor: forget it.
    for (std::size_t i = watched.size(); i-- > 0;) {
      if (stopped[i]) watched.erase(watched.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (items[1].revents & ZMQ_POLLIN) newWatches_.drain(watched);
  }
}

void ZapAuthenticator::answer() {
  std::vector<zmq::message_t> frames;
  for (;;) {
    zmq::message_t frame;
    if (!handler_.recv(frame, zmq::recv_flags::dontwait)) break;
    bool more = frame.more();
    frames.push_back(std::move(frame));
    if (!more) break;
  }
  if (frames.empty()) return;
  // REP must answer every request it read; a malformed one is refused.
  bool wellFormed = frames.size() >= 6 && text(frames[0]) == "1.0";
  std::string requestId = frames.size() > 1 ? text(frames[1]) : std::string();
  std::string domain = wellFormed ? text(frames[2]) : "?";
  std::string address = wellFormed ? text(frames[3]) : "?";
  std::string mechanism = wellFormed ? text(frames[5]) : "?";
  bool accepted = false;
  bool cluster = false;
  std::string reason;
  if (!wellFormed) {
    reason = "malformed ZAP request";
  } else if (mechanism != "CURVE" || frames.size() < 7 || frames[6].size() != 32) {
    reason = fmt::format("mechanism {} is not CURVE", mechanism);
  } else if (authorized_.contains(text(frames[6]))) {
    accepted = true;
    cluster = text(frames[6]) == clusterKey_;
  } else {
    reason =
        fmt::format("its key {} is neither the cluster key nor authorized", z85(frames[6].data()));
  }
  if (!accepted) {
    refuse(fmt::format("{} connection from {}", domain, address.empty() ? "a local peer" : address),
           reason);
  }
  auto more = zmq::send_flags::sndmore;
  (void)handler_.send(zmq::str_buffer("1.0"), more);
  (void)handler_.send(zmq::buffer(requestId), more);
  (void)handler_.send(zmq::buffer(std::string(accepted ? "200" : "400")), more);
  (void)handler_.send(zmq::buffer(std::string(accepted ? "OK" : "unknown key")), more);
  // The user id travels with every message of the connection (frame.h
  // peerKeyOf): a server tells cluster members from extra client keys.
  std::string user = !accepted ? "" : cluster ? kZapClusterUser : kZapClientUser;
  (void)handler_.send(zmq::buffer(user), more);
  (void)handler_.send(zmq::str_buffer(""), zmq::send_flags::none);
}

void ZapAuthenticator::readEvents(Watched& watched, bool& stopped) {
  for (;;) {
    zmq::message_t event;
    if (!watched.monitor.recv(event, zmq::recv_flags::dontwait)) return;
    zmq::message_t endpoint;
    (void)watched.monitor.recv(endpoint, zmq::recv_flags::dontwait);
    if (event.size() < 6) continue;
    std::uint16_t kind;
    std::uint32_t value;
    std::memcpy(&kind, event.data(), sizeof(kind));
    std::memcpy(&value, static_cast<const char*>(event.data()) + 2, sizeof(value));
    std::string who = fmt::format("{} connection on {}", watched.role, text(endpoint));
    switch (kind) {
      case ZMQ_EVENT_MONITOR_STOPPED:
        stopped = true;
        return;
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        refuse(who, describeProtocolError(value));
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        // The peer hung up first: it saw the mismatch before we did (no
        // key, or a CURVE client of another kind), or it is a port scanner.
        refuse(who, fmt::format("the peer hung up during the handshake ({}): it lacks the "
                                "cluster key, or is not a kiln peer",
                                zmq_strerror(static_cast<int>(value))));
        break;
      default:  // HANDSHAKE_FAILED_AUTH: answer() logged it with the peer's address
        break;
    }
  }
}

void ZapAuthenticator::refuse(const std::string& who, const std::string& reason) {
  refusals_.fetch_add(1);
  auto now = std::chrono::steady_clock::now();
  if (recent_.size() > 4096) {  // many peers (a scan): keep the memory bounded
    std::erase_if(recent_,
                  [now](const auto& entry) { return now - entry.second.logged >= kQuietPeriod; });
  }
  auto [entry, fresh] = recent_.try_emplace(who + "\n" + reason);
  Recent& recent = entry->second;
  if (!fresh && now - recent.logged < kQuietPeriod) {
    ++recent.quiet;
    return;
  }
  std::string since =
      recent.quiet == 0 ? "" : fmt::format(" ({} more like it not logged)", recent.quiet);
  logger_->warn("refused {}: {}{}", who, reason, since);
  recent = Recent{now, 0};
}

Status secureServer(zmq::socket_t& server, const ServerSecurity& security,
                    const std::string& role) {
  if (!security.keys) return okStatus();
  if (!curveAvailable()) {
    return unimplemented("this libzmq was built without CURVE (libsodium); cannot use a key");
  }
  if (security.authenticator == nullptr) {
    return invalidArgument(
        fmt::format("the {} has a cluster key but no ZAP authenticator runs on its context", role));
  }
  applyCurveServer(server, *security.keys, role);
  security.authenticator->watch(server, role);
  return okStatus();
}

}  // namespace kiln
