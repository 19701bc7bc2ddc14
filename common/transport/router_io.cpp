#include "common/transport/router_io.h"

#include <string_view>

#include "common/transport/frame_prefix.h"

namespace kiln {

void sendRouted(zmq::socket_t& router, const std::string& peer, zmq::message_t frame) {
  (void)router.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
  (void)router.send(frame, zmq::send_flags::dontwait);
}

void readRouted(zmq::socket_t& router, const FrameLimits& limits, int maxMessages,
                const std::function<void(const std::string& peer, InboundMessage)>& onMessage) {
  for (int i = 0; i < maxMessages; ++i) {
    zmq::message_t routingId;
    if (!router.recv(routingId, zmq::recv_flags::dontwait)) return;
    std::string peer(routingId.data<char>(), routingId.size());
    zmq::message_t frame;
    if (!routingId.more() || !router.recv(frame, zmq::recv_flags::dontwait)) continue;
    bool extraFrames = false;
    while (router.get(zmq::sockopt::rcvmore) != 0) {
      extraFrames = true;
      zmq::message_t extra;
      if (!router.recv(extra, zmq::recv_flags::dontwait)) break;
    }
    if (extraFrames) {
      sendRouted(router, peer, encodeErrorReply(0, invalidArgument("a request must be one frame")));
      continue;
    }
    auto message = InboundMessage::decode(frame, limits);
    if (!message.ok()) {
      // To the request that waits for it, where its first bytes say which.
      const std::string_view bytes(frame.data<char>(), frame.size());
      const std::uint64_t requestId = requestIdFromPrefix(bytes.substr(0, kRequestIdPrefixBytes));
      sendRouted(router, peer, encodeErrorReply(requestId, message.status()));
      continue;
    }
    message->setPeerKey(peerKeyOf(frame));
    onMessage(peer, std::move(message).value());
  }
}

}  // namespace kiln
