// The differential harness's policy, without processes: plans are seeded and
// stable, and the comparison counts each kind of mismatch where it belongs.
#include <gtest/gtest.h>

#include "bench/differential_episodes.h"

namespace kiln::bench {
namespace {

PlanOptions fewPlans() {
  PlanOptions options;
  options.seed = 3;
  options.episodes = 5;
  options.length = 4;
  options.benchmarks = {"benchmark://a", "benchmark://b"};
  options.actionCount = 6;
  options.avoid = {2};
  return options;
}

TEST(DifferentialPlan, IsSeededStableAndAvoidsWhatItMust) {
  const auto plans = planEpisodes(fewPlans());
  ASSERT_EQ(plans.size(), 5u);
  EXPECT_EQ(plans, planEpisodes(fewPlans()));
  EXPECT_EQ(plans[0].benchmark, "benchmark://a");
  EXPECT_EQ(plans[1].benchmark, "benchmark://b");
  for (const EpisodePlan& plan : plans) {
    ASSERT_EQ(plan.actions.size(), 4u);
    for (std::int64_t action : plan.actions) {
      EXPECT_GE(action, 0);
      EXPECT_LT(action, 6);
      EXPECT_NE(action, 2);
    }
  }
  // More episodes leave the first ones as they were; another seed changes them.
  PlanOptions more = fewPlans();
  more.episodes = 9;
  EXPECT_EQ(planEpisodes(more)[4], plans[4]);
  PlanOptions other = fewPlans();
  other.seed = 4;
  EXPECT_NE(planEpisodes(other), plans);
  PlanOptions nothingLeft = fewPlans();
  nothingLeft.actionCount = 1;
  nothingLeft.avoid = {0};
  EXPECT_TRUE(planEpisodes(nothingLeft).empty());
}

StepRecord stepped(std::int64_t observation, double reward, bool restored = false) {
  StepRecord step;
  step.values = {Value(observation), Value(reward)};
  step.restored = restored;
  return step;
}

const std::vector<ComparedSpace> kSpaces{{"Count"}, {"Reward:Count", true}};

TEST(DifferentialCompare, EqualRunsAreCleanAndRestoredStepsAreCounted) {
  std::vector<EpisodeRecord> quiet{{stepped(10, 0), stepped(8, 2), stepped(8, 0)}};
  std::vector<EpisodeRecord> faulted{{stepped(10, 0), stepped(8, 2, true), stepped(8, 0)}};
  const Comparison compared = compareRuns(quiet, faulted, kSpaces);
  EXPECT_TRUE(compared.clean());
  EXPECT_EQ(compared.episodes, 1u);
  EXPECT_EQ(compared.steps, 3u);
  EXPECT_EQ(compared.values, 6u);
  EXPECT_EQ(compared.restoredSteps, 1u);
}

TEST(DifferentialCompare, ARewardOffByAnEpisodeIsARewardMismatch) {
  // The bug the harness exists for: after a restore, the reward counted the
  // whole episode again.
  std::vector<EpisodeRecord> quiet{{stepped(10, 0), stepped(8, 2), stepped(7, 1)}};
  std::vector<EpisodeRecord> faulted{{stepped(10, 0), stepped(8, 2), stepped(7, 3, true)}};
  const Comparison compared = compareRuns(quiet, faulted, kSpaces);
  EXPECT_FALSE(compared.clean());
  EXPECT_EQ(compared.rewardMismatches, 1u);
  EXPECT_EQ(compared.observationMismatches, 0u);
  ASSERT_EQ(compared.examples.size(), 1u);
  EXPECT_EQ(compared.examples[0].what, "Reward:Count");
  EXPECT_EQ(compared.examples[0].step, 2u);
}

TEST(DifferentialCompare, ADifferentStateIsAnObservationMismatch) {
  std::vector<EpisodeRecord> quiet{{stepped(10, 0), stepped(8, 2)}};
  std::vector<EpisodeRecord> faulted{{stepped(10, 0), stepped(9, 2)}};
  EXPECT_EQ(compareRuns(quiet, faulted, kSpaces).observationMismatches, 1u);
}

TEST(DifferentialCompare, ALostStepOrAnotherEndIsAnOutcomeMismatch) {
  StepRecord lost;
  lost.error = ErrorCode::kDisconnected;
  lost.message = "session lost and not restored";
  std::vector<EpisodeRecord> quiet{{stepped(10, 0), stepped(8, 2)}, {stepped(1, 0)}};
  std::vector<EpisodeRecord> faulted{{stepped(10, 0), lost}, {stepped(1, 0), stepped(1, 0)}};
  const Comparison compared = compareRuns(quiet, faulted, kSpaces);
  EXPECT_EQ(compared.outcomeMismatches, 2u);
  EXPECT_EQ(compared.rewardMismatches, 0u);
  // An episode missing from one run is one too.
  quiet.push_back({stepped(1, 0)});
  EXPECT_EQ(compareRuns(quiet, faulted, kSpaces).outcomeMismatches, 3u);
}

TEST(DifferentialCompare, TheSameCompileErrorAtTheSameStepIsNoMismatch) {
  StepRecord broke;
  broke.error = ErrorCode::kCompileError;
  std::vector<EpisodeRecord> quiet{{stepped(10, 0), broke}};
  std::vector<EpisodeRecord> faulted{{stepped(10, 0), broke}};
  EXPECT_TRUE(compareRuns(quiet, faulted, kSpaces).clean());
}

}  // namespace
}  // namespace kiln::bench
