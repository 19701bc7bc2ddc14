// Every action is safe on every valid module: a bounded random-search
// campaign over kiln-bench-v0 and csmith programs ends with no invalid
// module, no crash and no LLVM error; unify-loop-exits, which crashed random
// search before it carried lower-switch, now runs on the programs that
// broke it and is refused (state unchanged) where LLVM 19 cannot run it.
#include <filesystem>

#include "benchmarks/kiln_bench_v0.h"
#include "datasets/generators.h"
#include "llvmenv/action_campaign.h"
#include "tests/llvmenv/test_support.h"

namespace kiln::llvmenv {
namespace {

using testing::loadKilnBenchProgram;
using testing::passTable;

std::vector<CampaignProgram> kilnBenchPrograms() {
  std::vector<CampaignProgram> programs;
  for (const benchmarks::EmbeddedBenchmark& b : benchmarks::kilnBenchV0()) {
    programs.push_back(
        {"kiln-bench-v0/" + std::string(b.name),
         std::string(reinterpret_cast<const char*>(b.bitcode.data()), b.bitcode.size())});
  }
  return programs;
}

std::string describe(const CampaignReport& report) {
  std::string text;
  for (const CampaignFailure& f : report.failures) {
    text += std::string(failureKindName(f.kind)) + " on " + f.program + " after";
    for (const std::string& pass : f.sequence) text += " " + pass;
    text += ": " + f.message.substr(0, 400) + "\n";
  }
  return text;
}

TEST(ActionCampaignTest, RandomEpisodesOverKilnBenchAndCsmithBreakNothing) {
  std::vector<CampaignProgram> programs = kilnBenchPrograms();
  ASSERT_GE(programs.size(), 20u);
  const datasets::DatasetConfig config;
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    auto generated = datasets::generateCsmith(config, seed);
    ASSERT_TRUE(generated.ok()) << generated.status().toString();
    programs.push_back({"csmith-v0/" + std::to_string(seed), std::move(generated->bytes)});
  }
  CampaignOptions options;
  options.episodes = static_cast<unsigned>(programs.size()) * 2;
  options.steps = 30;
  options.seed = 22;
  options.timeLimit = std::chrono::seconds(90);  // a safety net: the count bounds it
  auto report = runActionCampaign(passTable(), programs, options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_GE(report->episodes, programs.size()) << "the time limit cut the campaign short";
  EXPECT_EQ(report->invalidModules, 0u) << describe(*report);
  EXPECT_EQ(report->crashes, 0u) << describe(*report);
  EXPECT_EQ(report->otherErrors, 0u) << describe(*report);
  std::uint64_t runs = 0;
  for (const PassTiming& timing : report->timings) runs += timing.runs;
  EXPECT_EQ(runs, report->steps);
}

TEST(ActionCampaignTest, UnifyLoopExitsRunsWhereSwitchesUsedToBreakIt) {
  const std::size_t unify = *passTable()->find("lower-switch-then-unify-loop-exits");
  for (const char* program : {"quicksort", "nqueens", "expr_parser", "json_tokenizer"}) {
    auto state = loadKilnBenchProgram(program);
    ASSERT_NE(state, nullptr);
    // The sequences random search had broken it after: loops simplified and
    // rotated, then unified, again and again.
    for (const char* pass :
         {"mem2reg", "simplifycfg", "loop-rotate", "lower-switch-then-unify-loop-exits", "sroa",
          "loop-simplify", "lower-switch-then-unify-loop-exits", "simplifycfg",
          "lower-switch-then-unify-loop-exits"}) {
      auto outcome = state->applyPass(*passTable()->find(pass));
      ASSERT_TRUE(outcome.ok()) << program << " " << pass << ": " << outcome.status().toString();
    }
    auto again = state->applyPass(unify);
    ASSERT_TRUE(again.ok()) << again.status().toString();
  }
}

TEST(ActionCampaignTest, UnifyLoopExitsIsRefusedOnInvokeAndTheStateStaysUsable) {
  const std::string ir =
      testing::readFile(std::string(KILN_LLVMENV_SOURCE_DATA_DIR) + "/loop_exit_through_invoke.ll");
  auto state = ModuleState::fromIrText(passTable(), ir, "invoke.ll");
  ASSERT_TRUE(state.ok()) << state.status().toString();
  auto refused = (*state)->applyPass(*passTable()->find("lower-switch-then-unify-loop-exits"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("invoke in function 'f'"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE((*state)->usable());
  EXPECT_TRUE((*state)->applyPass(*passTable()->find("simplifycfg")).ok());
}

TEST(ActionCampaignTest, NoProgramsOrBadBitcodeIsAClearError) {
  EXPECT_EQ(runActionCampaign(passTable(), {}, {}).status().code(), ErrorCode::kInvalidArgument);
  auto bad = runActionCampaign(passTable(), {{"junk", "not bitcode"}}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("campaign program junk"), std::string::npos);
}

}  // namespace
}  // namespace kiln::llvmenv
