#include "client/channel.h"

#include <capnp/serialize.h>
#include <fmt/format.h>

#include "common/base/wire_convert.h"

namespace kiln::client {

void RequestIdentity::stamp(wire::Envelope::Builder envelope) const {
  envelope.setClientSecret(wireBytes(clientSecret));
  if (!experiment.empty()) envelope.setExperiment(experiment);
  if (!experimentKey.empty()) envelope.setExperimentKey(wireBytes(experimentKey));
}

void RequestIdentity::stampForWorker(wire::Envelope::Builder envelope,
                                     const std::string& endpoint) const {
  if (auto known = passes.find(endpoint); known != passes.end()) {
    envelope.setClientId(known->second.client.value);
    envelope.setClientPass(
        capnp::Data::Reader(known->second.pass.data(), known->second.pass.size()));
  } else if (named.contains(endpoint)) {
    envelope.setClientSecret(wireBytes(clientSecret));
  }
  if (!experiment.empty()) envelope.setExperiment(experiment);
  if (!experimentKey.empty()) {
    const std::string& pass = experimentPassFor(endpoint);
    envelope.setExperimentPass(
        capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(pass.data()), pass.size()));
  }
}

const std::string& RequestIdentity::experimentPassFor(const std::string& endpoint) const {
  MadePass& made = experimentPasses_[endpoint];
  if (made.pass.empty() || made.key != experimentKey.bytes()) {
    made.key = std::string(experimentKey.bytes());
    made.pass = experimentPassOf(experimentKey, endpoint);
  }
  return made.pass;
}

Channel::Channel(std::string endpoint, const RequestIdentity& identity, FrameLimits limits)
    : endpoint_(std::move(endpoint)), identity_(identity), limits_(limits) {}

Channel::~Channel() = default;

Status Channel::checkRequestSize(capnp::MessageBuilder& builder) const {
  if (serverLimit_ == 0) return okStatus();
  // The frame the server would read: the message, serialized.
  const std::size_t bytes = capnp::computeSerializedSizeInWords(builder) * sizeof(capnp::word);
  return bytes > serverLimit_ ? oversizedRequest(bytes, serverLimit_) : okStatus();
}

wire::Envelope::Builder Channel::begin(capnp::MessageBuilder& builder, Duration timeout,
                                       std::uint64_t target) {
  auto envelope = initEnvelope(builder, nextRequestId_++);
  if (carriesSecret_) {
    identity_.stamp(envelope);
  } else {
    identity_.stampForWorker(envelope, endpoint_);
  }
  envelope.setTimeoutMs(static_cast<std::uint32_t>(std::max<std::int64_t>(1, toMillis(timeout))));
  envelope.setTarget(target);
  return envelope;
}

Result<InboundMessage> Channel::call(capnp::MessageBuilder& builder, Duration timeout) {
  KILN_ASSIGN_OR_RETURN(std::uint64_t id, send(builder));
  return await(id, std::chrono::steady_clock::now() + timeout);
}

void Channel::abandon(std::uint64_t requestId) {
  pending_.erase(requestId);
  arrived_.erase(requestId);
}

Status Channel::openDirect(Duration) {
  return invalidArgument(fmt::format("{} is not reached over a direct channel", endpoint_));
}

void Channel::spinForReplies(Duration) {}

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

std::optional<Result<InboundMessage>> Channel::takeArrived(std::uint64_t requestId) {
  auto early = arrived_.find(requestId);
  if (early == arrived_.end()) return std::nullopt;
  InboundMessage message = std::move(early->second);
  arrived_.erase(early);
  Status error = unwrapError(message);
  if (!error.ok()) return Result<InboundMessage>(error);
  return Result<InboundMessage>(std::move(message));
}

void Channel::readAvailable() {}

bool Channel::replyReady(std::uint64_t) { return true; }

void Channel::addTo(ReadinessPoll&) {}

std::optional<Result<InboundMessage>> Channel::take(const void* data, std::size_t size,
                                                    std::uint64_t requestId) {
  auto message = InboundMessage::decode(data, size, limits_);
  if (!message.ok()) return std::nullopt;  // garbage from a broken server: the request times out
  std::uint64_t id = message->envelope().getRequestId();
  if (pending_.erase(id) == 0) return std::nullopt;  // abandoned or duplicate
  if (id != requestId) {
    arrived_.emplace(id, std::move(message).value());
    return std::nullopt;
  }
  Status error = unwrapError(*message);
  if (!error.ok()) return Result<InboundMessage>(error);
  return Result<InboundMessage>(std::move(message).value());
}

namespace {

class UnreachableChannel final : public Channel {
 public:
  UnreachableChannel(std::string endpoint, const RequestIdentity& identity, Status why)
      : Channel(std::move(endpoint), identity, FrameLimits{}), why_(std::move(why)) {}
  Result<std::uint64_t> send(capnp::MessageBuilder&) override { return why_; }
  Result<InboundMessage> await(std::uint64_t requestId, TimePoint) override {
    return invalidArgument(fmt::format("request {} is not outstanding", requestId));
  }
  bool peerLost() override { return false; }
  void markLost() override {}
  std::string connectedAddress() override { return {}; }

 private:
  Status why_;
};

}  // namespace

std::unique_ptr<Channel> unreachableChannel(std::string endpoint, const RequestIdentity& identity,
                                            Status why) {
  return std::make_unique<UnreachableChannel>(std::move(endpoint), identity, std::move(why));
}

}  // namespace kiln::client
