// Reading and writing on a ROUTER socket, shared by every server: each peer
// message is [routing id][one frame]. Frames that are not a single decodable
// envelope are answered with an error and never reach the server's logic.
#pragma once

#include <functional>
#include <string>
#include <zmq.hpp>

#include "common/transport/frame.h"

namespace kiln {

// Sends `frame` to `peer` without blocking; a peer that went away is not ours to handle.
void sendRouted(zmq::socket_t& router, const std::string& peer, zmq::message_t frame);

// Reads at most `maxMessages` waiting messages (bounded so that timers and
// completions are not starved by a flood) and hands each decoded one over.
void readRouted(zmq::socket_t& router, const FrameLimits& limits, int maxMessages,
                const std::function<void(const std::string& peer, InboundMessage)>& onMessage);

}  // namespace kiln
