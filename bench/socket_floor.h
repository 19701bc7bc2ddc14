// The floors of the stream transports kiln's steps take, measured in the same
// run as the figures they judge: a client process sends a payload to an echo
// process over a Unix stream socket (a same-host client's direct channel) or
// TCP loopback (a remote client's path, minus the network), and waits for it
// back. Two waiting disciplines, as kiln's own sides may use: blocking reads
// (both sides sleep in the kernel; every round trip pays the wake-ups) and
// polling (both sides spin on non-blocking reads; no wake-up at all).
//
// Endpoints are "unix:@<abstract name>" or "tcp:<IPv4>:<port>"; the echo
// side announces its own ("echo <endpoint>") as the other bench servers do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

enum class Waiting { kBlocking, kPolling };

struct StreamFloorOptions {
  std::string endpoint;  // where the echo process listens
  std::size_t payloadBytes = 16;
  Waiting waiting = Waiting::kBlocking;
  unsigned samples = 20000;
  double seconds = 3;  // upper bound on the measurement
};

// Round trips to the echo at options.endpoint: latency of each, and the
// rate. The first 100 warm up and are not counted.
struct StreamFloor {
  LatencySummary latency;
  double perSecond = 0;
  std::vector<std::int64_t> nanos;  // each counted round trip, in order (to pool several runs)
};
Result<StreamFloor> measureStreamFloor(const StreamFloorOptions& options);

// The echo process (`kiln bench socket-echo`, internal): listens on `listen`
// ("unix:@name" or "tcp:<IPv4>:0"), prints "echo <endpoint>", then
// echoes every byte of one connection at a time with `waiting`, until killed.
// With blocking reads and a non-zero `spinAfterReply`, it polls that long
// after each reply first, as WorkerServer's loop does (--reply-spin-us).
int runStreamEchoServer(const std::string& listen, Waiting waiting,
                        Duration spinAfterReply = Duration::zero());

}  // namespace kiln::bench
