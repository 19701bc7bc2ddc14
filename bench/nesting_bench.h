// `kiln bench nesting`: K experiments on one machine, each alternating a
// collection phase (a fixed number of steps over its sessions, all in
// flight) and a training lull as long as a collection phase of one
// experiment alone on its dedicated slots (50% duty), phases staggered so
// that lulls interleave. Three layouts of real kiln processes, measured in
// the same run on the same work (bench/nesting_layouts.h): dedicated slots,
// one shared pool of plain workers, and one `kiln nest` host as it runs by
// default. Two kinds of work (bench/nesting_work.h): calibrated busy steps,
// and llvm pass-ordering episodes on kiln-bench-v0.
// Figures per layout: aggregate collection throughput, each experiment's
// collection time against its baseline, fairness between experiments, slot
// and CPU use; for K = 2 and K = 4.
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct NestingOptions {
  std::vector<unsigned> experimentCounts = {2, 4};
  unsigned slots = 0;  // 0 = the machine's cores (at least K)
  unsigned phases = 3;
  std::string work = "both";  // busy, llvm or both
  // Steps per experiment and collection phase, by kind of work.
  unsigned busySteps = 400;
  unsigned llvmSteps = 200;
  unsigned busyMicros = 2000;  // compile time of one busy step
  unsigned passesPerStep = 3;  // llvm
  unsigned episodeSteps = 8;   // llvm: steps per episode
  // Sessions per slot an experiment may use, so that a slot has the next
  // step queued while the client handles the last reply.
  unsigned sessionsPerSlot = 2;
};

Result<Report> runNestingBench(const NestingOptions& options);

}  // namespace kiln::bench
