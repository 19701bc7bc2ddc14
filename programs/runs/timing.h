// Summaries of a program's wall times and when to stop taking them (policy,
// pure functions): what Runtime's samples say (RuntimeStats), the point
// estimate Reward:RuntimeO3 compares (the median, as CompilerGym's
// RuntimePointEstimateReward), and the repeat-until-stable rule.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln::runs {

// The median of `times` (0 for none).
double median(std::vector<double> times);

// How many times faster `times` runs than `baseline`: median(baseline) /
// median(times) (0 when `times` has no positive median).
double speedup(const std::vector<double>& baseline, const std::vector<double>& times);

// What a set of samples says. Quartiles interpolate linearly between order
// statistics (numpy's default). The median's confidence interval is
// distribution-free: the order statistics x(l) and x(n+1-l) with the
// largest l whose binomial(n, 1/2) tail is at most 2.5% on each side, so it
// covers the true median with at least 95% probability whatever the noise
// looks like; below 6 samples no l qualifies and it is [min, max].
struct RuntimeSummary {
  std::size_t count = 0;
  double median = 0, mean = 0, stdev = 0;  // stdev: the sample's (n - 1), 0 below 2 samples
  double min = 0, max = 0;
  double q1 = 0, q3 = 0;  // first and third quartiles; IQR = q3 - q1
  double ciLow = 0, ciHigh = 0;

  double iqr() const { return q3 - q1; }
  // IQR / median: how wide the bulk of the runs is (0 without a positive median).
  double relativeIqr() const;
  // The half-width of the median's confidence interval / median: how far the
  // point estimate may be off (1 without a positive median, i.e. unknown).
  double relativeCiHalfWidth() const;
};

RuntimeSummary summarize(const std::vector<double>& samples);

// The lower index l (1-based) of the median's ~95% confidence interval of
// `count` samples; 1 below 6 samples (the interval is then [min, max]).
std::size_t medianCiLowerRank(std::size_t count);

// When a Runtime measurement stops. Runs come in batches of `batchRuns`
// (llvm.runtime_runs), each after one unmeasured run; with a target, batches
// are added until the median's confidence half-width is within
// `targetRelativeHalfWidth` of the median, or `maxRuns` samples were taken.
struct StoppingRule {
  unsigned batchRuns = 5;
  unsigned maxRuns = 5;                // at least batchRuns; the operator's ceiling bounds it
  double targetRelativeHalfWidth = 0;  // 0: one batch, no stopping rule
  bool operator==(const StoppingRule&) const = default;
};

// Whether `summary` meets the rule's target (always false without one: a
// fixed count of runs judges nothing). Fewer than 6 samples never do: their
// interval is [min, max] with less than 95% coverage.
bool meetsTarget(const RuntimeSummary& summary, const StoppingRule& rule);

// How many more runs to take after `taken` samples summarized by `summary`:
// the first batch, then further batches while the target is not met, never
// beyond maxRuns; 0 = stop.
unsigned nextBatch(const RuntimeSummary& summary, const StoppingRule& rule);

}  // namespace kiln::runs
