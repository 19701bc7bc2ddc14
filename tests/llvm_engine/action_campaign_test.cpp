// Every action is safe on every valid module: a bounded random-search
// campaign over kiln-bench-v0 and csmith programs ends with no invalid
// module, no crash and no LLVM error; unify-loop-exits, which crashed random
// search before it carried lower-switch, now runs on the programs that
// broke it and is refused (state unchanged) where LLVM 19 cannot run it.
// And every action keeps the programs' behaviour: a bounded validation
// campaign (programs run on every input against -O0, and their ASan builds)
// finds no miscompile in the default space, and finds structurizecfg's when
// it is put back (kiln bench actions --validate runs the long one).
#include <filesystem>

#include "compilers/llvm_engine/action_campaign.h"
#include "compilers/llvm_engine/validation_campaign.h"
#include "compilers/llvm_session/campaign_check.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/generators.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::loadKilnBenchProgram;
using testing::passTable;

std::vector<CampaignProgram> kilnBenchPrograms() {
  std::vector<CampaignProgram> programs;
  for (const bundled::EmbeddedBenchmark& b : bundled::kilnBenchV0()) {
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

// kiln-bench-v0 programs with every kind of control flow (structurizecfg
// alone changes the output of all but adler32 and expr_parser among them),
// and a csmith program.
struct ValidationSet {
  std::vector<CampaignProgram> programs;
  std::vector<runs::RunSpec> specs;
};

ValidationSet validationSet() {
  ValidationSet set;
  for (const bundled::EmbeddedBenchmark& b : bundled::kilnBenchV0()) {
    const std::string name(b.name);
    for (const char* wanted : {"adler32", "bfs", "crc32", "dijkstra", "expr_parser", "huffman",
                               "json_tokenizer", "quicksort"}) {
      if (name != wanted) continue;
      set.programs.push_back(
          {"kiln-bench-v0/" + name,
           std::string(reinterpret_cast<const char*>(b.bitcode.data()), b.bitcode.size())});
      set.specs.push_back(runs::kilnBenchRunSpec());
    }
  }
  auto csmith = datasets::generateCsmith(datasets::DatasetConfig{}, 1);
  EXPECT_TRUE(csmith.ok()) << csmith.status().toString();
  if (csmith.ok()) {
    set.programs.push_back({"csmith-v0/1", std::move(csmith->bytes)});
    set.specs.push_back(runs::csmithRunSpec());
  }
  return set;
}

// Rounds of every family for every targeted action: bounded so that the
// default space's campaign stays within a few minutes on two cores.
ValidationOptions boundedValidation() {
  ValidationOptions options;
  options.plan.seed = 42;
  options.plan.randomSteps = 8;
  options.threads = 2;
  options.timeLimit = std::chrono::seconds(240);  // a safety net: the count bounds it
  return options;
}

std::string describe(const ValidationCampaignReport& report) {
  std::string text;
  for (const Reproducer& r : report.reproducers) {
    text += r.program + ":";
    for (const std::string& pass : r.sequence) text += " " + pass;
    text += " -> " + r.kind + ": " + r.message.substr(0, 300) + "\n";
  }
  for (const ExcludedProgram& e : report.excluded)
    text += "excluded " + e.program + ": " + e.reason + "\n";
  for (const std::string& error : report.errors) text += "error: " + error + "\n";
  return text;
}

TEST(ActionCampaignTest, EveryDefaultActionKeepsTheProgramsBehaviour) {
  ValidationSet set = validationSet();
  // Without ASan builds, which would double its time (kiln bench actions
  // --validate runs them).
  auto check = llvm_session::makeProgramCheck(set.specs, {.asan = false});
  ASSERT_TRUE(check.ok()) << check.status().toString();
  ValidationOptions options = boundedValidation();
  options.plan.sequences = 2 * passTable()->size();
  auto report = runValidationCampaign(passTable(), set.programs, *check, options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_TRUE(report->excluded.empty()) << describe(*report);
  EXPECT_EQ(report->sequences, report->planned) << "cut short\n" << describe(*report);
  EXPECT_EQ(report->miscompiles, 0u) << describe(*report);
  EXPECT_EQ(report->broken, 0u);
  EXPECT_EQ(report->checkErrors, 0u) << describe(*report);
  EXPECT_GT(report->checks, report->programs.size()) << "no state was run at all";
  for (const PassVerdicts& pass : report->passes) EXPECT_GE(pass.tried, 2u) << pass.pass;
}

TEST(ActionCampaignTest, TheBoundedCampaignFindsStructurizeCfgWhenItIsPutBack) {
  ValidationSet set = validationSet();
  auto check = llvm_session::makeProgramCheck(set.specs, {.asan = false});
  ASSERT_TRUE(check.ok()) << check.status().toString();
  // The default space's campaign, but its sequences planned for
  // structurizecfg alone, as if it were an action again.
  ValidationOptions options = boundedValidation();
  options.putBack = {"structurizecfg"};
  options.plan.focus = {"structurizecfg"};
  options.plan.sequences = 3;
  auto report = runValidationCampaign(passTable(), set.programs, *check, options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  const PassVerdicts& structurize = report->passes.back();
  ASSERT_EQ(structurize.pass, "structurizecfg");
  EXPECT_TRUE(structurize.putBack);
  EXPECT_GE(structurize.miscompiles, 1u) << describe(*report);
  ASSERT_FALSE(report->reproducers.empty());
  EXPECT_EQ(report->reproducers[0].sequence.back(), "structurizecfg") << describe(*report);
}

}  // namespace
}  // namespace kiln::llvm_engine
