#include "programs/runs/timing.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace kiln::runs {
namespace {

// The p-quantile of sorted samples, linear between order statistics.
double quantile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

// log of binomial(n, i) / 2^n: the probability that exactly i of n
// samples fall below the median. In log space: the coefficients overflow
// doubles long before n = 1000.
double logBinomialHalf(std::size_t n, std::size_t i) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
         std::lgamma(static_cast<double>(n - i) + 1) - static_cast<double>(n) * std::log(2.0);
}

// Each tail of the median's interval: 2.5%, for 95% coverage.
constexpr double kTailProbability = 0.025;
// Below this many samples no interval of order statistics reaches 95%.
constexpr std::size_t kMinSamplesForInterval = 6;

}  // namespace

double median(std::vector<double> times) {
  if (times.empty()) return 0;
  const auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), middle, times.end());
  if (times.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(times.begin(), middle)) / 2;
}

double speedup(const std::vector<double>& baseline, const std::vector<double>& times) {
  const double now = median(times);
  return now > 0 ? median(baseline) / now : 0;
}

std::size_t medianCiLowerRank(std::size_t count) {
  if (count < kMinSamplesForInterval) return 1;
  // The largest l with P(X <= l - 1) <= 2.5% (X: how many samples fall
  // below the true median): the first i whose cumulative tail exceeds it.
  double tail = 0;
  std::size_t i = 0;
  for (; i < count / 2; ++i) {
    tail += std::exp(logBinomialHalf(count, i));
    if (tail > kTailProbability) break;
  }
  return std::max<std::size_t>(i, 1);
}

double RuntimeSummary::relativeIqr() const { return median > 0 ? iqr() / median : 0; }

double RuntimeSummary::relativeCiHalfWidth() const {
  return median > 0 ? (ciHigh - ciLow) / 2 / median : 1;
}

RuntimeSummary summarize(const std::vector<double>& samples) {
  RuntimeSummary summary;
  summary.count = samples.size();
  if (samples.empty()) return summary;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.median = quantile(sorted, 0.5);
  summary.q1 = quantile(sorted, 0.25);
  summary.q3 = quantile(sorted, 0.75);
  summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  if (sorted.size() > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - summary.mean) * (x - summary.mean);
    summary.stdev = std::sqrt(squares / (n - 1));
  }
  const std::size_t lower = medianCiLowerRank(sorted.size());
  summary.ciLow = sorted[lower - 1];
  summary.ciHigh = sorted[sorted.size() - lower];
  return summary;
}

bool meetsTarget(const RuntimeSummary& summary, const StoppingRule& rule) {
  if (rule.targetRelativeHalfWidth <= 0) return false;
  if (summary.count < kMinSamplesForInterval || summary.median <= 0) return false;
  return summary.relativeCiHalfWidth() <= rule.targetRelativeHalfWidth;
}

unsigned nextBatch(const RuntimeSummary& summary, const StoppingRule& rule) {
  const unsigned batch = std::max(rule.batchRuns, 1u);
  const unsigned most = std::max(rule.maxRuns, batch);
  if (summary.count >= most) return 0;
  const auto left = static_cast<unsigned>(most - summary.count);
  if (summary.count == 0) return std::min(batch, left);
  if (rule.targetRelativeHalfWidth <= 0 || meetsTarget(summary, rule)) return 0;
  return std::min(batch, left);
}

}  // namespace kiln::runs
