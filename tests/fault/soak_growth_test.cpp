// The soak's growth judgement on made-up RSS series: flat, noisy, leaking,
// shrinking, and too short to judge.
#include "bench/soak_growth.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kiln::bench {
namespace {

// One point every `every` seconds over `seconds`, RSS from `mib(t)`.
template <class F>
std::vector<RssPoint> series(double seconds, double every, F mib) {
  std::vector<RssPoint> points;
  for (double t = 0; t <= seconds; t += every) points.push_back({t, mib(t)});
  return points;
}

TEST(SoakGrowth, FlatAfterWarmUpIsNotGrowing) {
  // Grows fast during warm-up (first third), then stays put.
  auto points = series(600, 10, [](double t) { return t < 200 ? 50 + t / 4 : 100.0; });
  GrowthJudgement g = judgeGrowth(points, 600);
  ASSERT_TRUE(g.judged);
  EXPECT_FALSE(g.growing);
  EXPECT_NEAR(g.middleMib, 100, 1e-9);
  EXPECT_NEAR(g.slopeMibPerMinute, 0, 1e-9);
}

TEST(SoakGrowth, NoiseWithinToleranceIsNotGrowing) {
  auto points = series(600, 10, [](double t) { return 200 + 3 * std::sin(t / 7); });
  EXPECT_FALSE(judgeGrowth(points, 600).growing);
}

TEST(SoakGrowth, SteadyLeakIsFlaggedWithItsSlope) {
  // 2 MiB per minute throughout: +6.7 MiB between the thirds' means.
  auto points = series(600, 10, [](double t) { return 100 + t / 30; });
  GrowthJudgement g = judgeGrowth(points, 600);
  ASSERT_TRUE(g.judged);
  EXPECT_TRUE(g.growing);
  EXPECT_NEAR(g.slopeMibPerMinute, 2.0, 1e-6);
  EXPECT_GT(g.lastMib, g.middleMib);
}

TEST(SoakGrowth, ShrinkingIsNotGrowing) {
  auto points = series(600, 10, [](double t) { return 300 - t / 10; });
  GrowthJudgement g = judgeGrowth(points, 600);
  EXPECT_FALSE(g.growing);
  EXPECT_LT(g.slopeMibPerMinute, 0);
}

TEST(SoakGrowth, LargeProcessNeedsProportionalGrowth) {
  // +10 MiB on 1 GiB is under 5 %: allocator noise, not a leak.
  auto points = series(600, 10, [](double t) { return t < 400 ? 1024.0 : 1034.0; });
  EXPECT_FALSE(judgeGrowth(points, 600).growing);
}

TEST(SoakGrowth, TooFewPointsInAThirdIsNotJudged) {
  // A worker restarted near the end has one point in the last third.
  std::vector<RssPoint> points{{450, 100}, {590, 300}};
  GrowthJudgement g = judgeGrowth(points, 600);
  EXPECT_FALSE(g.judged);
  EXPECT_FALSE(g.growing);
}

}  // namespace
}  // namespace kiln::bench
