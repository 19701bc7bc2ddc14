// ZMTP heartbeats, the same on both ends of a client's connection to a
// worker: a peer that vanishes without closing (its host cut off, node gone,
// SIGSTOP) is found by silence, and the connection dropped, on both sides
// within about the same time. The worker's side matters as much as the
// client's: a connection the worker kept open would take, once the link
// comes back, the requests the client's kernel still retransmits after the
// client gave up on it and moved its sessions elsewhere.
#pragma once

#include <chrono>
#include <zmq.hpp>

namespace kiln {

inline constexpr std::chrono::milliseconds kZmtpHeartbeatInterval{1000};
inline constexpr std::chrono::milliseconds kZmtpHeartbeatTimeout{3000};

inline void applyZmtpHeartbeats(zmq::socket_t& socket) {
  socket.set(zmq::sockopt::heartbeat_ivl, static_cast<int>(kZmtpHeartbeatInterval.count()));
  socket.set(zmq::sockopt::heartbeat_timeout, static_cast<int>(kZmtpHeartbeatTimeout.count()));
}

}  // namespace kiln
