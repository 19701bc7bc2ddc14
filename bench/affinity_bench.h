// `kiln bench affinity`: what placing a session near its benchmark's cached
// copies is worth. Real coordinator and llvm worker processes; clients start
// sessions on benchmarks drawn at random from a dataset of many, once with
// the coordinator's cache affinity and once by load alone (a fresh cluster
// each, cold caches), and report each mode's starts that found the
// benchmark on their worker already (hit rate) and start latency.
#pragma once

#include <string>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct AffinityBenchOptions {
  unsigned workers = 4;      // worker processes, one slot each
  unsigned benchmarks = 30;  // drawn from: `prefix` + 1..N
  unsigned starts = 200;     // per mode
  unsigned clients = 2;      // starting sessions at once
  double slack = 1.0;        // the affinity mode's --cache-affinity-slack
  std::string prefix = "generator://csmith-v0/";
  unsigned seed = 1;  // of the benchmark draw (the same in both modes)
};

Result<Report> runAffinityBench(const AffinityBenchOptions& options);

}  // namespace kiln::bench
