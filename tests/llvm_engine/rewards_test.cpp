// Reward helpers: plain arithmetic, CompilerGym's normalization.
#include <gtest/gtest.h>

#include "compilers/llvm_engine/rewards.h"

namespace kiln::llvm_engine {
namespace {

TEST(RewardsTest, DeltasArePreviousMinusCurrent) {
  EXPECT_DOUBLE_EQ(irInstructionCountReward(100, 90), 10.0);
  EXPECT_DOUBLE_EQ(irInstructionCountReward(90, 100), -10.0);
  EXPECT_DOUBLE_EQ(objectTextSizeReward(4096, 4000), 96.0);
}

TEST(RewardsTest, OzVariantsNormalizeByOzImprovement) {
  Baselines b;
  b.instCountO0 = 200;
  b.instCountOz = 100;
  b.textSizeO0 = 1000;
  b.textSizeOz = 600;
  // Reaching Oz's cost from O0 in one step is a reward of 1.
  EXPECT_DOUBLE_EQ(irInstructionCountOzReward(200, 100, b), 1.0);
  EXPECT_DOUBLE_EQ(irInstructionCountOzReward(200, 150, b), 0.5);
  EXPECT_DOUBLE_EQ(objectTextSizeOzReward(1000, 900, b), 0.25);
}

TEST(RewardsTest, NormNeverBelowOne) {
  Baselines b;
  b.instCountO0 = 50;
  b.instCountOz = 60;  // Oz made it bigger
  EXPECT_DOUBLE_EQ(irInstructionCountOzReward(50, 45, b), 5.0);
}

}  // namespace
}  // namespace kiln::llvm_engine
