// Frame decoding (common/transport/frame.h) of one ZeroMQ frame from a hostile peer:
// whatever the bytes, decode() returns a value or an invalid-argument status,
// and a decoded envelope can be walked, converted and re-encoded without a
// crash. Properties checked: a decoded frame re-encodes to a frame that
// decodes again; every wire Value/Space that converts also converts back.
#include <capnp/message.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "common/base/wire_convert.h"
#include "common/transport/frame.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_frame: property violated: %s\n", what);
    std::abort();
  }
}

// A value that converts from the wire must convert to the wire and back.
void roundTripValue(kiln::wire::Value::Reader wireValue) {
  kiln::Result<kiln::Value> value = kiln::fromWire(wireValue);
  if (!value.ok()) return;
  capnp::MallocMessageBuilder builder;
  auto copy = builder.initRoot<kiln::wire::Value>();
  kiln::toWire(*value, copy);
  kiln::Result<kiln::Value> again = kiln::fromWire(copy.asReader());
  require(again.ok(), "a converted Value does not convert back");
  require(again->describe() == value->describe(), "a Value changed on a round trip");
}

void roundTripSpace(kiln::wire::Space::Reader wireSpace) {
  kiln::Result<kiln::Space> space = kiln::fromWire(wireSpace);
  if (!space.ok()) return;
  capnp::MallocMessageBuilder builder;
  auto copy = builder.initRoot<kiln::wire::Space>();
  kiln::toWire(*space, copy);
  require(kiln::fromWire(copy.asReader()).ok(), "a converted Space does not convert back");
}

// Reads the parts of an envelope that kiln converts to its own types.
void walk(kiln::wire::Envelope::Reader envelope) {
  (void)kiln::checkProtocolVersion(envelope);
  if (envelope.isRequest()) {
    auto request = envelope.getRequest();
    if (request.isStep()) {
      for (auto action : request.getStep().getActions()) roundTripValue(action);
    }
  } else if (envelope.isReply()) {
    auto reply = envelope.getReply();
    if (reply.isError()) (void)kiln::fromWire(reply.getError());
    if (reply.isSpaces()) {
      for (auto space : reply.getSpaces().getActionSpaces()) roundTripSpace(space);
      for (auto space : reply.getSpaces().getObservationSpaces()) roundTripSpace(space);
    }
    if (reply.isStepped()) {
      for (auto observation : reply.getStepped().getObservations()) roundTripValue(observation);
      if (reply.getStepped().hasNewActionSpace()) {
        roundTripSpace(reply.getStepped().getNewActionSpace());
      }
    }
    if (reply.isSessionStarted()) {
      for (auto observation : reply.getSessionStarted().getObservations()) {
        roundTripValue(observation);
      }
    }
  } else if (envelope.isDisconnect()) {
    (void)kiln::fromWire(envelope.getDisconnect());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Two limits: the production default and a small one, so the size check runs too.
  kiln::FrameLimits limits;
  if (size > 0 && (data[0] & 1) != 0) limits.maxMessageBytes = 256;
  kiln::Result<kiln::InboundMessage> decoded = kiln::InboundMessage::decode(data, size, limits);
  if (!decoded.ok()) {
    require(decoded.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a bad frame is not an invalid-argument status");
    return 0;
  }
  bool walked = false;
  try {
    kiln::wire::Envelope::Reader envelope = decoded->envelope();
    walk(envelope);
    (void)envelope.toString();  // visits every field, within the traversal limit
    walked = true;
  } catch (const kj::Exception&) {
    // A malformed body: the handlers catch this and answer invalid-argument.
  }
  if (!walked) return 0;
  try {
    capnp::MallocMessageBuilder copy;
    copy.setRoot(decoded->envelope());
    zmq::message_t frame = kiln::encodeFrame(copy);
    kiln::Result<kiln::InboundMessage> again =
        kiln::InboundMessage::decode(frame, kiln::FrameLimits{});
    require(again.ok(), "a decoded envelope re-encodes to a frame that does not decode");
  } catch (const kj::Exception&) {
    // Copying may exceed the reader's traversal limit when pointers overlap.
  }
  return 0;
}
