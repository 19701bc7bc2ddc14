// The replay verdict (include/kiln/client/state_replay.h), pure: a reward within the
// tolerance reproduces, anything else says by how much it differs; the
// instruction count a recorded reward implies, for the rewards that have one.
#include <kiln/client/state_replay.h>

#include <gtest/gtest.h>

namespace kiln::client {
namespace {

TEST(StateReplayTest, RewardsWithinTheToleranceReproduce) {
  const ReplayOptions options;
  EnvState state{"benchmark://kiln-bench-v0/qsort", {"gvn"}, 1.0, 0.5};
  EXPECT_TRUE(judgeReplay(state, 0.5 + 1e-7, options).reproduced);
  const ReplayResult differs = judgeReplay(state, 0.25, options);
  EXPECT_FALSE(differs.reproduced);
  EXPECT_EQ(differs.problem, "reward 0.25 replayed, 0.5 recorded (differs by 0.25)");
  EXPECT_FALSE(judgeReplay(state, std::nullopt, options).reproduced);
  state.reward.reset();
  const ReplayResult unrecorded = judgeReplay(state, 0.25, options);
  EXPECT_TRUE(unrecorded.reproduced);
  EXPECT_EQ(unrecorded.reward, 0.25);
  ReplayOptions loose;
  loose.tolerance = 0.5;
  state.reward = 0.5;
  EXPECT_TRUE(judgeReplay(state, 0.1, loose).reproduced);
}

TEST(StateReplayTest, InstructionCountsFollowFromInstructionRewards) {
  // O0 = 1000, Oz = 600: a reward of 0.5 of the Oz improvement is 800 left.
  EXPECT_EQ(impliedInstructionCount("IrInstructionCountOz", 0.5, 1000, 600), 800);
  EXPECT_EQ(impliedInstructionCount("IrInstructionCountOz", 1.0, 1000, 600), 600);
  EXPECT_EQ(impliedInstructionCount("IrInstructionCountOz", 2.0, 10, 12), 8);  // norm at least 1
  EXPECT_EQ(impliedInstructionCount("IrInstructionCount", 42.0, 1000, 600), 958);
  EXPECT_FALSE(impliedInstructionCount("ObjectTextSizeOz", 0.5, 1000, 600).has_value());
}

}  // namespace
}  // namespace kiln::client
