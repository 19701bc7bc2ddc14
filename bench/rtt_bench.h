// `kiln bench rtt`: the round trip of a noop step through real coordinator
// and worker processes on loopback, against a raw ZeroMQ ping-pong of the same
// payload as the floor; aggregate steps/s with many sessions; and the memory
// of coordinator and worker with many idle sessions.
#pragma once

#include <cstdint>
#include <string>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct RttOptions {
  unsigned iterations = 20000;       // round trips per measurement (also time-bounded)
  double secondsPerMeasurement = 3;  // upper bound per measurement
  unsigned concurrentSessions = 64;
  unsigned idleSessions = 10000;
  unsigned slots = 2;
  bool pinned = true;     // also measure with every process on CPU 0
  bool forceTcp = false;  // client::ClientOptions::forceTcp for the kiln step rows
};

Result<Report> runRttBench(const RttOptions& options);

// The baseline's other end: a ROUTER that echoes every frame (runs until killed).
int runZmqEchoServer(const std::string& listen);

}  // namespace kiln::bench
