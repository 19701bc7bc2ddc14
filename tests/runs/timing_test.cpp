// What Runtime's samples say and when a measurement stops (programs/runs/timing.h):
// quartiles as numpy computes them, the median's confidence interval against
// the published order-statistic table, and the repeat-until-stable rule.
#include "programs/runs/timing.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln::runs {
namespace {

TEST(TimingTest, ASummaryOfKnownSamples) {
  // numpy: median 3, mean 4.2, var(ddof=1) 12.7, percentiles 25/75 -> 2, 5.
  const RuntimeSummary s = summarize({5, 1, 3, 10, 2});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4.2);
  EXPECT_NEAR(s.stdev, std::sqrt(12.7), 1e-12);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 5);
  EXPECT_DOUBLE_EQ(s.iqr(), 3);
  EXPECT_DOUBLE_EQ(s.relativeIqr(), 1);
  // Five samples: no interval reaches 95%, so it is all of them.
  EXPECT_DOUBLE_EQ(s.ciLow, 1);
  EXPECT_DOUBLE_EQ(s.ciHigh, 10);
}

TEST(TimingTest, QuartilesInterpolateAsNumpyDoes) {
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) -> 1.75, 2.5, 3.25.
  const RuntimeSummary s = summarize({4, 3, 2, 1});
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(median({4, 3, 2, 1}), 2.5);
}

TEST(TimingTest, NothingAndOneSample) {
  const RuntimeSummary none = summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.median, 0);
  EXPECT_EQ(none.relativeCiHalfWidth(), 1);  // unknown, not "perfect"
  const RuntimeSummary one = summarize({0.25});
  EXPECT_EQ(one.median, 0.25);
  EXPECT_EQ(one.stdev, 0);
  EXPECT_EQ(one.ciLow, 0.25);
  EXPECT_EQ(one.ciHigh, 0.25);
}

TEST(TimingTest, TheMediansIntervalMatchesTheOrderStatisticTable) {
  // The 95% distribution-free interval's lower rank: the largest l with
  // P(binomial(n, 1/2) <= l - 1) <= 2.5%, from exact sums of binomial
  // coefficients (Python's math.comb), as order-statistic tables list it.
  const std::pair<std::size_t, std::size_t> table[] = {{5, 1},  {6, 1},   {7, 1},   {8, 1},
                                                       {9, 2},  {10, 2},  {12, 3},  {15, 4},
                                                       {20, 6}, {30, 10}, {50, 18}, {100, 40}};
  for (const auto& [n, rank] : table) EXPECT_EQ(medianCiLowerRank(n), rank) << "n = " << n;
  // Large counts stay near n/2 - sqrt(n) and never cross the median.
  const std::size_t rank = medianCiLowerRank(1000);
  EXPECT_GT(rank, 460u);
  EXPECT_LT(rank, 500u);
}

TEST(TimingTest, TheIntervalIsMadeOfTheSamplesRanks) {
  std::vector<double> samples;
  for (int i = 20; i >= 1; --i) samples.push_back(i);  // 1..20, backwards
  const RuntimeSummary s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.ciLow, 6);    // x(6)
  EXPECT_DOUBLE_EQ(s.ciHigh, 15);  // x(20 + 1 - 6)
  EXPECT_DOUBLE_EQ(s.relativeCiHalfWidth(), (15 - 6) / 2.0 / 10.5);
}

TEST(TimingTest, WithoutATargetOneBatch) {
  const StoppingRule rule{5, 5, 0};
  EXPECT_EQ(nextBatch(summarize({}), rule), 5u);
  EXPECT_EQ(nextBatch(summarize({1, 9, 1, 9, 1}), rule), 0u);  // noisy, but no target
  EXPECT_FALSE(meetsTarget(summarize({1, 1, 1, 1, 1, 1}), rule));
}

TEST(TimingTest, WithATargetMoreBatchesUntilTheMedianIsThatPrecise) {
  const StoppingRule rule{5, 23, 0.05};
  // Five identical runs: still below the six an interval needs.
  std::vector<double> samples(5, 1.0);
  EXPECT_EQ(nextBatch(summarize(samples), rule), 5u);
  samples.push_back(1.0);
  EXPECT_TRUE(meetsTarget(summarize(samples), rule));
  EXPECT_EQ(nextBatch(summarize(samples), rule), 0u);
  // Noisy runs: another batch, then what is left up to maxRuns, then stop.
  std::vector<double> noisy;
  for (int i = 0; i < 10; ++i) noisy.push_back(i % 2 == 0 ? 1.0 : 2.0);
  EXPECT_FALSE(meetsTarget(summarize(noisy), rule));
  EXPECT_EQ(nextBatch(summarize(noisy), rule), 5u);
  for (int i = 10; i < 20; ++i) noisy.push_back(i % 2 == 0 ? 1.0 : 2.0);
  EXPECT_EQ(nextBatch(summarize(noisy), rule), 3u);
  for (int i = 20; i < 23; ++i) noisy.push_back(i % 2 == 0 ? 1.0 : 2.0);
  EXPECT_FALSE(meetsTarget(summarize(noisy), rule));
  EXPECT_EQ(nextBatch(summarize(noisy), rule), 0u);
}

TEST(TimingTest, AMaximumBelowOneBatchStillTakesTheBatch) {
  EXPECT_EQ(nextBatch(summarize({}), StoppingRule{7, 3, 0.01}), 7u);
  EXPECT_EQ(nextBatch(summarize({}), StoppingRule{0, 0, 0}), 1u);
}

TEST(TimingTest, SpeedupComparesMedians) {
  EXPECT_DOUBLE_EQ(speedup({2, 2, 100}, {1, 1, 50}), 2);
  EXPECT_EQ(speedup({1}, {}), 0);
}

}  // namespace
}  // namespace kiln::runs
