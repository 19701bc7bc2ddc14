// `kiln bench cluster`: kiln across hosts, on the bed of network namespaces
// with emulated links (scripts/netbed up --emulated). Host 1 runs the
// coordinator, hosts 2 .. N-1 a worker each, and the bench's client runs on
// host N. For each added one-way link delay (0, 200 us, 2 ms by default):
//   - a step's round trip to a worker on another host, one in flight,
//     against a raw TCP echo between the same two hosts in the same run
//     (same payload size, blocking reads: the floor of the path), and a
//     raw ZeroMQ echo there (the transport a step takes);
//   - a placement's round trip to the coordinator;
//   - aggregate steps/s of many sessions over every worker, with 1 step in
//     flight per session and with several (pipelining hides the latency).
// Then, with no added delay, host 2's cable is pulled for each of `cuts`
// seconds while every session steps: steps attempted, answered and lost,
// sessions restored elsewhere, how long until host 2 is back with the
// coordinator after the cable is, and whether a late step to each moved
// session's old copy is refused.
// Needs root (namespaces and TAP devices).
#pragma once

#include <filesystem>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct ClusterBenchOptions {
  std::filesystem::path netbed;  // scripts/netbed
  unsigned hosts = 5;            // coordinator + workers + client
  std::vector<unsigned> delaysUs = {0, 200, 2000};
  unsigned samples = 300;  // round trips per latency row
  unsigned sessions = 12;  // for the throughput rows
  unsigned pipelined = 4;  // steps in flight per session in the pipelined row
  double throughputSeconds = 3;
  std::vector<double> cutsSeconds = {1, 5, 20};
  bool quick = false;  // 4 hosts, fewer samples, 0 and 2000 us, one cut of 4 s
};

Result<Report> runClusterBench(const ClusterBenchOptions& options);

// Steps counted one request each: answered (with the right sum), or lost.
struct StepTally {
  std::uint64_t attempted = 0, answered = 0, lost = 0;
  std::string firstLoss;
};

// One pipelined step (action 1, observing Sum) per noop session; `sums`
// holds what each session's Sum is and is kept up to date. A step that fails
// or answers a wrong sum is lost.
void stepNoopRound(const std::vector<client::Session*>& sessions, std::vector<std::int64_t>& sums,
                   StepTally& tally);

// Where a step goes on a nesting host: the underlying worker, and the
// experiment (with its key, hex) that may address it.
struct UnderlyingAddress {
  std::uint64_t target = 0;
  std::string experiment;
  std::string experimentKey;
};

// A step for `session` sent to `endpoint` on a connection of its own, as a
// request a client's kernel still retransmits after the client gave up on
// that worker would arrive. The worker's answer: ok, or its error.
Status lateStep(const std::string& endpoint, std::uint64_t session,
                const UnderlyingAddress& underlying = {});

}  // namespace kiln::bench
