// The transport's floor, measured in the same run as a bench's figures: the
// round trip of a raw ZeroMQ request that does nothing.
#pragma once

#include <cstddef>
#include <string>

#include <kiln/status.h>
#include "bench/socket_floor.h"
#include "bench/stats.h"

namespace kiln::bench {

// Round trips of `samples` DEALER -> ROUTER echoes of
// 64 bytes over `bind` (e.g. "tcp://127.0.0.1:0" or an ipc:// path), on
// threads started by the caller's thread, so in the caller's CPU affinity.
// Each side has its own context, hence its own I/O thread, as a client and a
// worker have: one shared context would save two thread hops per round trip
// and understate the floor by ~10 us.
Result<LatencySummary> rawZmqRoundTrips(const std::string& bind, unsigned samples);

// Round trips of `payloadBytes` both ways to an echo in another process
// (`kiln bench zmq-echo`, a ROUTER) at `endpoint`, from a DEALER on a context
// of this thread's own: `samples` of them (after 100 that warm up), for at
// most `seconds`. A silent echo fails it after 5 s.
Result<StreamFloor> measureZmqEchoFloor(const std::string& endpoint, std::size_t payloadBytes,
                                        unsigned samples, double seconds);

}  // namespace kiln::bench
