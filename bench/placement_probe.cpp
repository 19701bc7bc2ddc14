#include "bench/placement_probe.h"

#include "common/base/wire_convert.h"
#include "common/security/identity.h"
#include "common/transport/frame.h"

namespace kiln::bench {

PlacementProbe::PlacementProbe(zmq::context_t& zmq, const std::string& coordinator)
    : socket_(zmq, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.connect(coordinator);
}

Result<ProbePlacement> PlacementProbe::place(const std::string& sessionType, Duration timeout,
                                             const std::string& experiment, const Secret* key) {
  const std::uint64_t request = nextRequest_++;
  capnp::MallocMessageBuilder builder(256);
  auto envelope = initEnvelope(builder, request);
  envelope.setTimeoutMs(static_cast<std::uint32_t>(toMillis(timeout)));
  if (!experiment.empty()) envelope.setExperiment(experiment);
  if (key != nullptr) envelope.setExperimentKey(wireBytes(*key));
  envelope.initRequest().initPlace().setSessionType(sessionType);
  const auto sent = std::chrono::steady_clock::now();
  const auto deadline = sent + timeout;
  if (!socket_.send(encodeFrame(builder), zmq::send_flags::dontwait)) {
    return overloaded("the coordinator's socket takes no more requests");
  }
  FrameLimits limits;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return timeoutError("no placement before the deadline");
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, left) == 0) continue;
    zmq::message_t frame;
    if (!socket_.recv(frame, zmq::recv_flags::dontwait)) continue;
    const auto answered = std::chrono::steady_clock::now();
    KILN_ASSIGN_OR_RETURN(InboundMessage message, InboundMessage::decode(frame, limits));
    auto envelope = message.envelope();
    const std::uint64_t id = envelope.getRequestId();
    if (id <= lastAnswered_) {
      ++duplicates_;
      continue;
    }
    if (id != request) continue;  // the answer to an earlier request that timed out
    lastAnswered_ = id;
    if (!envelope.isReply()) return internalError("the coordinator answered with no reply");
    auto reply = envelope.getReply();
    if (reply.isError()) return fromWire(reply.getError());
    if (!reply.isPlacement()) return internalError("the coordinator's answer is no placement");
    return ProbePlacement{
        reply.getPlacement().getEndpoint().cStr(), reply.getPlacement().getTarget(),
        std::chrono::duration_cast<std::chrono::nanoseconds>(answered - sent).count()};
  }
}

}  // namespace kiln::bench
