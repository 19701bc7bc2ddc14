// `kiln bench nesting`: K experiments on one machine, each alternating a
// collection phase (a fixed number of noop steps that busy-spin for a
// calibrated time, all its sessions in flight) and a training lull as long as
// a dedicated collection phase (50% duty), phases staggered so that lulls
// interleave. Two layouts, measured in the same run:
//   dedicated: each experiment owns 1/K of the slots in plain workers;
//   nested:    every experiment has a worker on one nesting host spanning
//              all the slots, shared by experiment weight.
// Figures: per experiment the collection-phase time, aggregate steps/s and
// the process's CPU utilization, for K = 2 and K = 4.
#pragma once

#include <vector>

#include "bench/stats.h"
#include "common/status.h"

namespace kiln::bench {

struct NestingOptions {
  std::vector<unsigned> experimentCounts = {2, 4};
  unsigned slots = 0;            // 0 = the machine's cores (at least K)
  unsigned stepsPerPhase = 400;  // per experiment and collection phase
  unsigned phases = 3;
  unsigned busyMicros = 2000;  // compile time of one step
};

Result<Report> runNestingBench(const NestingOptions& options);

}  // namespace kiln::bench
