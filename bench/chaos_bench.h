// `kiln bench chaos`: N sessions of a replayable type (noop, or llvm on
// kiln-bench-v0 programs) stepping, pipelined, on several real `kiln worker`
// processes while a chaos thread SIGKILLs a random worker at random
// intervals and starts a replacement. Bounded in time (default 20 s).
// Prints steps attempted and completed, sessions restored, workers killed,
// and steps lost, which must be 0: every failed step or any noop session
// whose final sum differs from what was sent is lost. A compile error of an
// llvm step (a pass that breaks the module) ends that episode and is
// counted apart; it is no loss.
//
// With --episodes N it is the differential harness instead
// (bench/differential_episodes.h): N seeded episodes run on a quiet cluster
// and again on one built alike under a fault (--fault, bench/chaos_faults.h),
// every compared reward and observation checked step by step; it fails on
// any mismatch. Without it, the stepping loop above also checks every
// reward against what the step did (noop: the action added to the sum;
// llvm: the drop of the instruction count).
//
// By default the hosts run as the fault tests run them (0.2 s heartbeats,
// each replacement on a new port). `--heartbeat-seconds 1
// --same-endpoints` runs them as a user's script would: default
// heartbeats, and a worker started again on the address it had, so that a
// restored session may be placed on a dead worker the coordinator still
// lists, or on its replacement at the same address.
#pragma once

#include <cstdint>

#include <kiln/status.h>
#include "bench/chaos_faults.h"
#include "bench/stats.h"

namespace kiln::bench {

struct ChaosOptions {
  // The cluster, its client and the fault's pacing (also the stepping
  // loop's: its workers, slots, heartbeats, pauses between kills and
  // request timeout). Its seed is set from `seed` below.
  ChaosClusterOptions cluster;
  unsigned sessions = 16;
  double seconds = 20;               // stepping time
  std::uint64_t seed = 0;            // 0 = random
  std::string sessionType = "noop";  // or "llvm"
  bool sameEndpoints = false;        // a replacement listens where its predecessor did
  // The differential harness (0 episodes: the stepping loop instead).
  unsigned episodes = 0;
  unsigned episodeLength = 8;
  std::string fault = "kill";  // bench/chaos_faults.h
  // Noop sessions' busy time per action (noop.busy_us) in the harness, so
  // that their steps take long enough for faults to land in them.
  unsigned busyMicros = 2000;
};

struct ChaosFigures {
  std::uint64_t attempted = 0, completed = 0, lost = 0, restored = 0, kills = 0;
  std::uint64_t mismatched = 0;     // noop sessions whose final state differs
  std::uint64_t compileErrors = 0;  // llvm steps the compiler refused: episode over
  // Rewards that differ from what the step did (the stepping loop), or from
  // the quiet run's (the differential harness), and the harness's other
  // mismatches: observations, and episodes whose course differs.
  std::uint64_t rewardMismatches = 0, observationMismatches = 0, outcomeMismatches = 0;
  std::uint64_t episodes = 0, comparedValues = 0, restoredSteps = 0;
  // Workers that died by themselves (not killed by the bench), apart from
  // those that stopped on purpose after catching a crash in compile work.
  std::uint64_t diedOnTheirOwn = 0, restartsAfterCaughtCrash = 0;
  double seconds = 0;
};

// Runs the benchmark; `figures` (optional) receives the counts.
Result<Report> runChaosBench(const ChaosOptions& options, ChaosFigures* figures = nullptr);
// The differential harness (what runChaosBench runs when options.episodes > 0).
Result<Report> runChaosDifferential(const ChaosOptions& options, ChaosFigures* figures = nullptr);

}  // namespace kiln::bench
