// Framing between Cap'n Proto messages and ZeroMQ frames. Incoming frames are
// size-checked, copied into word-aligned memory and read with traversal and
// nesting limits; a malformed frame becomes an invalid-argument Status.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstddef>
#include <memory>
#include <zmq.hpp>

#include <kiln/frame_limits.h>
#include <kiln/status.h>
#include "schema/kiln.capnp.h"

namespace kiln {

// What the ZAP authenticator established about a message's peer
// (common/security/zap_authenticator.h): nothing (no key in use), the cluster key,
// or an extra client key from --authorized-keys.
enum class PeerKey : std::uint8_t { kNone, kCluster, kAuthorizedClient };
// The ZAP user ids the authenticator gives a connection, by its key.
inline constexpr const char* kZapClusterUser = "kiln-cluster";
inline constexpr const char* kZapClientUser = "kiln-client";

// A decoded Envelope that owns its aligned bytes.
class InboundMessage {
 public:
  static Result<InboundMessage> decode(const void* data, std::size_t size,
                                       const FrameLimits& limits);
  static Result<InboundMessage> decode(const zmq::message_t& frame, const FrameLimits& limits) {
    return decode(frame.data(), frame.size(), limits);
  }

  wire::Envelope::Reader envelope() const { return envelope_; }
  std::size_t sizeBytes() const { return words_.size() * sizeof(capnp::word); }
  // Set by the socket reader from the frame's ZAP user id (peerKeyOf).
  PeerKey peerKey() const { return peerKey_; }
  void setPeerKey(PeerKey key) { peerKey_ = key; }

 private:
  InboundMessage() = default;
  kj::Array<capnp::word> words_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
  wire::Envelope::Reader envelope_;
  PeerKey peerKey_ = PeerKey::kNone;
};

// The key a received frame's peer authenticated with (its ZAP user id).
PeerKey peerKeyOf(zmq::message_t& frame);

// Serializes a finished message into one ZeroMQ frame (a single copy).
zmq::message_t encodeFrame(capnp::MessageBuilder& message);

// Starts an envelope with the current protocol version and the request id.
wire::Envelope::Builder initEnvelope(capnp::MessageBuilder& message, std::uint64_t requestId);

// A complete error reply to `requestId`.
zmq::message_t encodeErrorReply(std::uint64_t requestId, const Status& status);

// The refusal of a request of `bytes` over a server's `limit` (its
// operator's --max-message-bytes): what a worker answers on a direct
// channel, and what a client says before sending one over ZeroMQ.
Status oversizedRequest(std::size_t bytes, std::uint64_t limit);

// A clear refusal if the envelope speaks another protocol version.
Status checkProtocolVersion(wire::Envelope::Reader envelope);

}  // namespace kiln
