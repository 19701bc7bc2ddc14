#include "common/transport/frame.h"

#include <fmt/format.h>
#include <kj/io.h>

#include <cstring>

#include "common/base/wire_convert.h"

namespace kiln {

Result<InboundMessage> InboundMessage::decode(const void* data, std::size_t size,
                                              const FrameLimits& limits) {
  if (size > limits.maxMessageBytes) {
    return invalidArgument(fmt::format("message of {} bytes exceeds the limit of {} bytes", size,
                                       limits.maxMessageBytes));
  }
  if (size == 0 || size % sizeof(capnp::word) != 0) {
    return invalidArgument(
        fmt::format("malformed frame: {} bytes is not a whole number of 8-byte words", size));
  }
  InboundMessage message;
  // ZeroMQ gives no alignment guarantee (small frames live inside zmq_msg_t).
  message.words_ = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  std::memcpy(message.words_.begin(), data, size);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = message.words_.size() * 4 + 1024;
  options.nestingLimit = limits.nestingLimit;
  try {
    message.reader_ = std::make_unique<capnp::FlatArrayMessageReader>(message.words_, options);
    message.envelope_ = message.reader_->getRoot<wire::Envelope>();
    // Touch the union tag so that a broken root pointer fails here, not later.
    (void)message.envelope_.which();
  } catch (const kj::Exception& e) {
    return invalidArgument(fmt::format("malformed message: {}", e.getDescription().cStr()));
  }
  return message;
}

PeerKey peerKeyOf(zmq::message_t& frame) {
  // NULL when the socket has no ZAP handler (no key): nothing was established.
  const char* user = zmq_msg_gets(frame.handle(), "User-Id");
  if (user == nullptr) return PeerKey::kNone;
  if (std::strcmp(user, kZapClusterUser) == 0) return PeerKey::kCluster;
  return PeerKey::kAuthorizedClient;
}

zmq::message_t encodeFrame(capnp::MessageBuilder& message) {
  std::size_t words = capnp::computeSerializedSizeInWords(message);
  zmq::message_t frame(words * sizeof(capnp::word));
  kj::ArrayOutputStream stream(kj::arrayPtr(frame.data<kj::byte>(), frame.size()));
  capnp::writeMessage(stream, message);
  return frame;
}

wire::Envelope::Builder initEnvelope(capnp::MessageBuilder& message, std::uint64_t requestId) {
  auto envelope = message.initRoot<wire::Envelope>();
  envelope.setProtocolVersion(wire::PROTOCOL_VERSION);
  envelope.setRequestId(requestId);
  return envelope;
}

zmq::message_t encodeErrorReply(std::uint64_t requestId, const Status& status) {
  capnp::MallocMessageBuilder message(256);
  auto envelope = initEnvelope(message, requestId);
  toWire(status, envelope.initReply().initError());
  return encodeFrame(message);
}

Status oversizedRequest(std::size_t bytes, std::uint64_t limit) {
  return invalidArgument(fmt::format(
      "the request is {} bytes, over this worker's limit of {} bytes (its operator's "
      "--max-message-bytes): send a program this large as a file:// benchmark or from a dataset",
      bytes, limit));
}

Status checkProtocolVersion(wire::Envelope::Reader envelope) {
  if (envelope.getProtocolVersion() != wire::PROTOCOL_VERSION) {
    return invalidArgument(fmt::format(
        "protocol version {} is not supported: this kiln speaks version {}; upgrade the older side",
        envelope.getProtocolVersion(), wire::PROTOCOL_VERSION));
  }
  return okStatus();
}

}  // namespace kiln
