// Every pass of the table runs on real modules without crashing and leaves a
// verified module (applyPass verifies; a failure would be a compileError).
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::loadBenchmark;
using testing::passTable;

class AllPassesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AllPassesTest, EachPassOnAFreshCopy) {
  auto original = loadBenchmark(GetParam());
  ASSERT_NE(original, nullptr);
  int changedCount = 0;
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    auto copy = original->clone();
    ASSERT_TRUE(copy.ok()) << copy.status().toString();
    auto outcome = (*copy)->applyPass(i);
    ASSERT_TRUE(outcome.ok()) << passTable()->at(i).name << ": " << outcome.status().toString();
    EXPECT_TRUE((*copy)->usable());
    changedCount += outcome->changed ? 1 : 0;
  }
  // Unoptimized code: most passes find something to do.
  EXPECT_GT(changedCount, 20);
}

TEST_P(AllPassesTest, AllPassesInSequence) {
  auto state = loadBenchmark(GetParam());
  ASSERT_NE(state, nullptr);
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    auto outcome = state->applyPass(i);
    ASSERT_TRUE(outcome.ok()) << passTable()->at(i).name << ": " << outcome.status().toString();
  }
  EXPECT_TRUE(state->objectTextSizeBytes().ok());
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, AllPassesTest,
                         ::testing::Values("matrix", "calls", "strings", "stencil"));

}  // namespace
}  // namespace kiln::llvm_engine
