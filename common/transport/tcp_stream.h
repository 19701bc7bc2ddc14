// TCP streams for the direct channels between a client and a worker on
// another host (worker/direct_channels.h): endpoints split into host and
// port, a listener, a connect bounded by a deadline, and the options every
// such stream gets. Nonblocking sockets throughout: a loop never waits on one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "common/base/unique_fd.h"

namespace kiln {

struct TcpHostPort {
  std::string host;  // as written, without IPv6 brackets ("*" = every interface)
  std::uint16_t port = 0;
};

// A port number 0..65535 written in decimal digits only; nullopt otherwise.
std::optional<std::uint16_t> parsePort(std::string_view text);

// "tcp://host:port" (or "tcp://source;host:port", ZeroMQ's connect form) split
// (port "*" = 0, any free port); nullopt for anything else or a port that is
// not 0..65535.
std::optional<TcpHostPort> splitTcpEndpoint(std::string_view endpoint);

// A nonblocking listener on `host` ("*" or "0.0.0.0" = every interface; a
// name is resolved) and `port` (0 = any free port); `bound` gets its port.
Result<UniqueFd> listenTcp(const std::string& host, std::uint16_t port, std::uint16_t& bound);

// A nonblocking stream connected to host:port by `deadline` (a name is
// resolved first), tuned with tuneTcpStream. disconnected when the peer
// refuses or cannot be reached in time.
Result<UniqueFd> connectTcp(const std::string& host, std::uint16_t port, TimePoint deadline);

// Requests leave at once (no Nagle delay), and a peer that vanishes without
// closing (node gone, cable pulled) is found by keep-alive probes (after
// 10 s of silence, every 5 s, 3 of them) and by unacknowledged data (20 s).
void tuneTcpStream(int fd);

}  // namespace kiln
