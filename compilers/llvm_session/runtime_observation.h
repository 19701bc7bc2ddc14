// The llvm session's Runtime settings and the RuntimeStats observation: how
// a session asks for its runs (llvm.runtime_runs, llvm.runtime_max_runs,
// llvm.runtime_target; the operator's --runtime-max-runs bounds both counts)
// and what it gets back, the samples with their median, spread and where
// they ran.
//
// RuntimeStats, a dict (the samples of one measurement and what they say):
//   samples          seconds, in the order they ran (as Runtime gives them)
//   count            how many (llvm.runtime_runs, or more under a target)
//   median, mean, stdev, min, max, q1, q3, iqr     seconds
//   relative_iqr     iqr / median: how wide the bulk of the runs is
//   ci_low, ci_high  the median's distribution-free 95% confidence interval
//                    (programs/runs/timing.h; [min, max] below 6 samples)
//   relative_ci      its half-width / median: how far the median may be off
//   target           llvm.runtime_target (0: none)
//   stable           1 when relative_ci reached the target, else 0
//   cpu              the measuring CPU the runs had to themselves (-1 unpinned)
//   queued_s         how long the measurement waited in line for it
#pragma once

#include <cstdint>
#include <string>

#include <kiln/space.h>
#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/llvm_session/program_runs.h"
#include "programs/runs/timing.h"

namespace kiln::llvm_session {

struct RuntimeSettings {
  unsigned runs = 5;     // llvm.runtime_runs: a batch, and the count without a target
  unsigned maxRuns = 0;  // llvm.runtime_max_runs: 0 = the operator's ceiling
  double target = 0;     // llvm.runtime_target: the median's relative half-width, 0 = none

  // The stopping rule under the operator's `ceiling` (--runtime-max-runs).
  runs::StoppingRule rule(std::uint32_t ceiling) const;
};

// Whether `key` is one of RuntimeSettings' parameters.
bool isRuntimeParameter(const std::string& key);

// Sets one; the counts at most `ceiling`. The value as kept, or
// invalid-argument / the ceiling's refusal naming what was wrong.
Result<std::string> setRuntimeParameter(RuntimeSettings& settings, const std::string& key,
                                        const std::string& value, std::uint32_t ceiling);

Space runtimeStatsSpace();
Value runtimeStatsValue(const RuntimeMeasurement& measured, const runs::StoppingRule& rule);
// Runtime's tensor of seconds.
Value secondsValue(const std::vector<double>& seconds);

}  // namespace kiln::llvm_session
