// `kiln bench chaos`: N noop sessions (replayable) stepping, pipelined, on
// several real `kiln worker` processes while a chaos thread SIGKILLs a
// random worker at random intervals and starts a replacement. Bounded in
// time (default 20 s). Prints steps attempted and completed, sessions
// restored, workers killed, and steps lost, which must be 0: every failed
// step or any session whose final sum differs from what was sent is lost.
#pragma once

#include <cstdint>

#include "bench/stats.h"
#include "common/status.h"

namespace kiln::bench {

struct ChaosOptions {
  unsigned sessions = 16;
  unsigned workers = 3;
  unsigned slots = 2;
  double seconds = 20;          // stepping time
  double minKillSeconds = 1.0;  // between kills: uniform in [min, max]
  double maxKillSeconds = 3.0;
  std::uint64_t seed = 0;  // 0 = random
};

struct ChaosFigures {
  std::uint64_t attempted = 0, completed = 0, lost = 0, restored = 0, kills = 0;
  std::uint64_t mismatched = 0;  // sessions whose final state differs
  // Workers that died by themselves (not killed by the bench), apart from
  // those that stopped on purpose after catching a crash in compile work.
  std::uint64_t diedOnTheirOwn = 0, restartsAfterCaughtCrash = 0;
  double seconds = 0;
};

// Runs the benchmark; `figures` (optional) receives the counts.
Result<Report> runChaosBench(const ChaosOptions& options, ChaosFigures* figures = nullptr);

}  // namespace kiln::bench
