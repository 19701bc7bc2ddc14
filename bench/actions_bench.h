// `kiln bench actions`: is every action safe on every valid module? A random
// search campaign (llvmenv/action_campaign.h) over kiln-bench-v0 and csmith
// programs, in this process: episodes, steps, invalid modules, crashes,
// refusals, and what each pass costs. Judged against nothing but zero: any
// invalid module or crash is a bug of the action space, listed with the
// sequence that reproduces it.
#pragma once

#include <cstdint>

#include "bench/stats.h"
#include "common/status.h"

namespace kiln::bench {

struct ActionsBenchOptions {
  unsigned episodes = 300;
  unsigned steps = 30;
  unsigned csmithPrograms = 10;  // generator://csmith-v0/<seed> for seeds 1..N
  std::uint64_t seed = 1;
  double maxSeconds = 0;        // stop starting episodes after this long (0 = no limit)
  unsigned slowestPasses = 15;  // timing rows in the table (JSON has every pass)
  bool json = false;
};

Result<Report> runActionsBench(const ActionsBenchOptions& options);

}  // namespace kiln::bench
