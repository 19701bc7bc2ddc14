#include "worker/coordinator_link.h"

#include <fmt/format.h>

#include "common/base/wire_convert.h"
#include "common/transport/zmtp_heartbeat.h"

namespace kiln {

CoordinatorLink::CoordinatorLink(zmq::context_t& context, std::string coordinatorEndpoint,
                                 WorkerAdvert advert, LinkTiming timing, const Clock& clock,
                                 Logger logger, LinkRequestHandler onRequest,
                                 std::optional<ClusterKeys> keys)
    : context_(context),
      endpoint_(std::move(coordinatorEndpoint)),
      advert_(std::move(advert)),
      timing_(timing),
      clock_(clock),
      logger_(std::move(logger)),
      onRequest_(std::move(onRequest)),
      keys_(std::move(keys)),
      backoff_(timing.minBackoff),
      retryAt_(clock.now()) {}

void CoordinatorLink::send(capnp::MessageBuilder& builder) {
  if (!socket_) return;
  ++socketUses_;
  // Never block the loop on a coordinator that is not there yet.
  (void)socket_->send(encodeFrame(builder), zmq::send_flags::dontwait);
}

void CoordinatorLink::connect(const LoadReport& load) {
  socket_.emplace(context_, zmq::socket_type::dealer);
  ++socketUses_;
  socket_->set(zmq::sockopt::linger, 0);
  if (keys_) applyCurveClient(*socket_, *keys_);
  socket_->connect(endpoint_);
  capnp::MallocMessageBuilder builder(512);
  auto reg = initEnvelope(builder, 1).initRequest().initRegisterWorker();
  reg.setEndpoint(advert_.endpoint);
  reg.setSlots(advert_.slots);
  reg.setMaxSessions(advert_.maxSessions);
  auto types = reg.initSessionTypes(advert_.sessionTypes.size());
  for (unsigned i = 0; i < advert_.sessionTypes.size(); ++i) types.set(i, advert_.sessionTypes[i]);
  reg.setVersion(advert_.version);
  reg.setHostname(advert_.hostname);
  reg.setPid(advert_.pid);
  reg.setNesting(advert_.nesting);
  reg.setLocalEndpoint(advert_.localEndpoint);
  reg.setHostIdentity(advert_.hostIdentity);
  if (advert_.reloadToken) advert_.token = advert_.reloadToken();
  if (!advert_.token.empty()) reg.setToken(wireBytes(advert_.token));
  reg.setPassKey(advert_.passKey.wire());
  reg.setMaxMessageBytes(advert_.maxMessageBytes);
  // A host that re-registers (the coordinator restarted) says at once which
  // underlying workers it runs, so that their experiments can adopt them.
  auto underlying = reg.initUnderlying(load.underlying.size());
  for (unsigned i = 0; i < load.underlying.size(); ++i) toWire(load.underlying[i], underlying[i]);
  send(builder);
  state_ = State::kRegistering;
  lastHeard_ = clock_.now();
}

void CoordinatorLink::dropAndBackOff(const std::string& reason) {
  logger_->warn("coordinator {}: {}; re-registering in {} ms", endpoint_, reason,
                toMillis(backoff_));
  socket_.reset();
  workerId_.reset();
  coordinatorInterval_ = {};  // the next coordinator says its own
  state_ = State::kBackingOff;
  retryAt_ = clock_.now() + backoff_;
  backoff_ = std::min(backoff_ * 2, timing_.maxBackoff);
}

void CoordinatorLink::onReadable(const FrameLimits& limits) {
  while (socket_) {
    ++socketUses_;
    zmq::message_t frame;
    if (!socket_->recv(frame, zmq::recv_flags::dontwait)) return;
    lastHeard_ = clock_.now();
    heardAt_ = lastHeard_;
    auto message = InboundMessage::decode(frame, limits);
    if (!message.ok()) {
      logger_->warn("coordinator sent a malformed frame: {}", message.status().toString());
      continue;
    }
    try {
      auto envelope = message->envelope();
      if (envelope.isDisconnect()) {
        // The coordinator forgot us (it restarted, or declared us lost).
        dropAndBackOff("asked us to re-register (" +
                       std::string(envelope.getDisconnect().getMessage().cStr()) + ")");
        backoff_ = timing_.minBackoff;
        retryAt_ = clock_.now();
        return;
      }
      if (envelope.isRequest()) {
        if (state_ != State::kRegistered || !onRequest_) {
          sendReply(encodeErrorReply(envelope.getRequestId(),
                                     unimplemented("this worker takes no requests on its link")));
        } else {
          onRequest_(std::move(message).value());
        }
        continue;
      }
      if (envelope.isReply() && envelope.getReply().isRegistered()) {
        auto registered = envelope.getReply().getRegistered();
        workerId_ = WorkerId{registered.getWorkerId()};
        // Bounded as the coordinator's own flag is (an hour).
        coordinatorInterval_ = std::chrono::milliseconds(
            std::min<std::uint32_t>(registered.getHeartbeatIntervalMs(), 3600 * 1000));
        lastCoordinatorInterval_ = coordinatorInterval_;
        state_ = State::kRegistered;
        backoff_ = timing_.minBackoff;
        ++registrations_;
        logger_->info("registered with coordinator {} as worker {}", endpoint_, workerId_->value);
      } else if (envelope.isReply() && envelope.getReply().isError()) {
        Status refusal = fromWire(envelope.getReply().getError());
        dropAndBackOff("refused registration: " + refusal.toString());
        return;
      }
    } catch (const kj::Exception& e) {
      logger_->warn("coordinator sent a malformed message: {}", e.getDescription().cStr());
    }
  }
}

Duration cutOffAfter(Duration interval, int liveness) {
  const Duration beforeDeclaredLost = std::max<Duration>((liveness - 1) * interval, interval / 2);
  return std::min<Duration>(beforeDeclaredLost, kZmtpHeartbeatTimeout - kZmtpHeartbeatInterval);
}

std::optional<TimePoint> CoordinatorLink::cutOffSince() const {
  if (registrations_ == 0) return std::nullopt;
  const Duration interval = std::max(timing_.heartbeatInterval, lastCoordinatorInterval_);
  const Duration after = cutOffAfter(interval, timing_.liveness);
  if (clock_.now() - heardAt_ < after) return std::nullopt;
  return heardAt_ + std::min(interval, after / 2);
}

void CoordinatorLink::tick(const LoadReport& load) {
  TimePoint now = clock_.now();
  if (state_ == State::kBackingOff) {
    if (now >= retryAt_) connect(load);
    return;
  }
  const Duration interval = std::max(timing_.heartbeatInterval, coordinatorInterval_);
  if (now - lastHeard_ > interval * timing_.liveness) {
    // A coordinator that refuses our key never answers: say where to look.
    return dropAndBackOff(state_ != State::kRegistering ? "went silent"
                          : keys_ ? "did not answer the registration (running? same --key-file?)"
                                  : "did not answer the registration");
  }
  if (state_ != State::kRegistered || now < nextHeartbeat_) return;
  nextHeartbeat_ = now + timing_.heartbeatInterval;
  capnp::MallocMessageBuilder builder(256);
  auto heartbeat = initEnvelope(builder, 0).initHeartbeat();
  heartbeat.setWorkerId(workerId_->value);
  toWire(load.total, heartbeat.initLoad());
  auto underlying = heartbeat.initUnderlying(load.underlying.size());
  for (unsigned i = 0; i < load.underlying.size(); ++i) toWire(load.underlying[i], underlying[i]);
  send(builder);
}

void CoordinatorLink::sendReply(zmq::message_t frame) {
  if (!socket_) return;
  ++socketUses_;
  (void)socket_->send(frame, zmq::send_flags::dontwait);
}

}  // namespace kiln
