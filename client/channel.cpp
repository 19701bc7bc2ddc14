#include "client/channel.h"

#include <fmt/format.h>

#include "common/wire_convert.h"

namespace kiln::client {

Channel::Channel(zmq::context_t& zmq, std::string endpoint, ClientId clientId,
                 std::string experiment, FrameLimits limits)
    : endpoint_(std::move(endpoint)),
      clientId_(clientId),
      experiment_(std::move(experiment)),
      limits_(limits),
      socket_(zmq, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::sndhwm, 100000);
  socket_.set(zmq::sockopt::rcvhwm, 100000);
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(limits_.maxMessageBytes));
  socket_.connect(endpoint_);
}

wire::Envelope::Builder Channel::begin(capnp::MessageBuilder& builder, Duration timeout,
                                       std::uint64_t target) {
  lastBegun_ = nextRequestId_++;
  auto envelope = initEnvelope(builder, lastBegun_);
  envelope.setClientId(clientId_.value);
  envelope.setTimeoutMs(static_cast<std::uint32_t>(std::max<std::int64_t>(1, toMillis(timeout))));
  if (!experiment_.empty()) envelope.setExperiment(experiment_);
  envelope.setTarget(target);
  return envelope;
}

Result<std::uint64_t> Channel::send(capnp::MessageBuilder& builder) {
  std::uint64_t id = builder.getRoot<wire::Envelope>().getRequestId();
  auto sent = socket_.send(encodeFrame(builder), zmq::send_flags::dontwait);
  if (!sent) {
    return overloaded(fmt::format("cannot send to {}: its queue is full", endpoint_));
  }
  pending_.emplace(id, true);
  return id;
}

Status Channel::unwrapError(const InboundMessage& message) const {
  auto envelope = message.envelope();
  Status version = checkProtocolVersion(envelope);
  if (!version.ok()) return version;
  if (envelope.isReply() && envelope.getReply().isError()) {
    return fromWire(envelope.getReply().getError());
  }
  if (!envelope.isReply()) {
    return internalError(fmt::format("{} sent something other than a reply", endpoint_));
  }
  return okStatus();
}

Result<InboundMessage> Channel::await(std::uint64_t requestId, TimePoint deadline) {
  if (auto early = arrived_.find(requestId); early != arrived_.end()) {
    InboundMessage message = std::move(early->second);
    arrived_.erase(early);
    KILN_RETURN_IF_ERROR(unwrapError(message));
    return message;
  }
  if (pending_.count(requestId) == 0) {
    return invalidArgument(fmt::format("request {} is not outstanding", requestId));
  }
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      pending_.erase(requestId);
      return timeoutError(
          fmt::format("{} did not answer in time (worker busy, gone or "
                      "unreachable)",
                      endpoint_));
    }
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1,
              std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                  std::chrono::milliseconds(1));
    zmq::message_t frame;
    while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
      auto message = InboundMessage::decode(frame, limits_);
      if (!message.ok()) continue;  // garbage from a broken server: the request times out
      std::uint64_t id = message->envelope().getRequestId();
      if (pending_.erase(id) == 0) continue;  // abandoned or duplicate
      if (id == requestId) {
        KILN_RETURN_IF_ERROR(unwrapError(*message));
        return std::move(message).value();
      }
      arrived_.emplace(id, std::move(message).value());
    }
  }
}

Result<InboundMessage> Channel::call(capnp::MessageBuilder& builder, Duration timeout) {
  KILN_ASSIGN_OR_RETURN(std::uint64_t id, send(builder));
  return await(id, std::chrono::steady_clock::now() + timeout);
}

void Channel::abandon(std::uint64_t requestId) {
  pending_.erase(requestId);
  arrived_.erase(requestId);
}

}  // namespace kiln::client
