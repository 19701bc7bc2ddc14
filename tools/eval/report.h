// What an evaluation reports (pure): per benchmark the best sequence an agent
// found and its sizes against -Oz, and over the run the geometric means, as
// CompilerGym's llvm-ic-v0 leaderboard does (-Oz's count / the agent's: above
// 1x is smaller than -Oz). Printed as a table or as JSON.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <kiln/client/env_state.h>
#include <kiln/status.h>
#include "tools/eval/sequence_scorer.h"
#include "tools/eval/validation_verdict.h"

namespace kiln::eval {

// One benchmark of the run. A benchmark whose search or measurement failed,
// or whose final state validation found invalid, is scored as if the agent
// had left the program unoptimized (-O0's figures against -Oz's): it
// weighs on the geomean instead of leaving it, so two agents are always
// compared on the same programs (CompilerGym's leaderboard took only
// validated states).
struct BenchmarkResult {
  std::string benchmark;
  Status failure;                      // ok: the search and the measurement ran
  PassSequence passes;                 // the best sequence found
  std::vector<std::string> passNames;  // the same, as the action space names them
  std::int64_t instCountInitial = 0;   // the untouched benchmark
  std::int64_t instCountO0 = 0;
  std::int64_t instCount = 0;  // after `passes`
  std::int64_t instCountOz = 0;
  std::int64_t instCountO3 = 0;  // the leaderboard's -O3 row
  std::int64_t textSizeO0 = 0;
  std::int64_t textSize = 0;  // .text bytes after `passes`
  std::int64_t textSizeOz = 0;
  std::string irSha1;         // the IR after `passes`
  double seconds = 0;         // the search's wall time on this benchmark
  std::uint64_t steps = 0;    // passes the search applied
  std::uint64_t queries = 0;  // sequences it scored
  ValidationVerdict validation;

  // Failed or invalid: its figures are -O0's, its reward 0.
  bool scoredUnoptimized() const;
  // llvm-ic-v0's episode reward for `passes`: the IrInstructionCountOz
  // rewards summed, (initial - final) / max(O0 - Oz, 1), as the state
  // reached it, valid or not (the states file records it beside the validity).
  double reachedReward() const;
  // The reward scored: reachedReward(), 0 when failed or invalid.
  double reward() const;
  double instCountVsOz() const;  // instCountOz / the scored count
  double textSizeVsOz() const;   // textSizeOz / the scored size
};

// A benchmark not even its baselines could be measured for (it does not
// exist, no worker could take it): it cannot be scored, and the summary
// says the geomean leaves it out.
struct BenchmarkFailure {
  std::string benchmark;
  Status status;
};

struct EvalReport {
  std::string agent;
  std::uint64_t seed = 0;
  std::uint64_t stepBudget = 0;  // per benchmark; 0 = none
  double timeBudget = 0;         // seconds per benchmark; 0 = none
  unsigned parallel = 0;
  bool validated = true;  // false: --no-validate, every state "unvalidated"
  double seconds = 0;     // the whole run's wall time
  std::vector<BenchmarkResult> results;
  std::vector<BenchmarkFailure> failures;

  double geomeanInstCountVsOz() const;
  double geomeanTextSizeVsOz() const;
  std::size_t count(Validity validity) const;  // of the results that did not fail
  std::size_t failedCount() const;             // results whose search or measurement failed
};

// The geometric mean of positive values (1 for none).
double geomean(std::span<const double> values);
// size / reference with the empty cases defined: 0 over 0 is 1.
double sizeRatio(std::int64_t reference, std::int64_t size);

// The best state of each benchmark whose search ran, in CompilerGym's state
// format (include/kiln/client/env_state.h): its pass names, the search's
// walltime, its reward and its validity.
std::vector<client::EnvState> bestStates(const EvalReport& report);

std::string formatTable(const EvalReport& report);
std::string formatJson(const EvalReport& report);

}  // namespace kiln::eval
