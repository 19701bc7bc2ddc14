// The validation campaign's policy and bookkeeping, with a fake check (no
// program runs): the plan gives every action every family, and a miscompile
// is pinned on the first action after which the behaviour goes wrong. The
// fake "miscompiles" whenever the module has fewer allocas than the program
// as it came (mem2reg, sroa and others promote them): the culprit must then
// be the first step that left fewer, checked by replaying its prefix.
#include <map>
#include <set>

#include "compilers/llvm_engine/campaign_docs.h"
#include "compilers/llvm_engine/validation_campaign.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::passTable;

std::vector<CampaignProgram> kilnBench(std::initializer_list<const char*> names) {
  std::vector<CampaignProgram> programs;
  for (const char* name : names) {
    programs.push_back({std::string("kiln-bench-v0/") + name,
                        testing::readFile(std::string(KILN_BENCH_BC_DIR) + "/" + name + ".bc")});
  }
  return programs;
}

std::size_t allocas(const ModuleState& state) {
  auto ir = state.ir();
  EXPECT_TRUE(ir.ok());
  std::size_t count = 0;
  for (std::size_t at = 0; ir.ok() && (at = ir->find(" = alloca ", at)) != std::string::npos;
       ++at) {
    ++count;
  }
  return count;
}

// "Misbehaves" as soon as the module has fewer allocas than it came with.
Result<Behaviour> allocaCheck(std::size_t, const ModuleState& reference,
                              const ModuleState& candidate) {
  if (allocas(candidate) < allocas(reference)) {
    return Behaviour{false, "output", "fewer allocas"};
  }
  return Behaviour{};
}

std::vector<CampaignAction> tableActions() {
  auto actions = campaignActions(*passTable(), {});
  EXPECT_TRUE(actions.ok()) << actions.status().toString();
  return actions.ok() ? *actions : std::vector<CampaignAction>{};
}

TEST(ValidationPlanTest, EveryActionGetsEveryFamilyOnRotatingPrograms) {
  const std::vector<CampaignAction> actions = tableActions();
  const std::size_t n = actions.size();
  PlanOptions options;
  options.sequences = n * kSequenceFamilies.size();
  options.randomSteps = 7;
  auto plan = planSequences(actions, 4, options);
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  ASSERT_EQ(plan->size(), options.sequences);
  const std::size_t mem2reg = *passTable()->find("mem2reg");
  const std::size_t sroa = *passTable()->find("sroa");
  std::map<std::size_t, std::set<SequenceFamily>> families;
  for (std::size_t i = 0; i < plan->size(); ++i) {
    const CampaignSequence& s = (*plan)[i];
    const std::size_t round = i / n;
    EXPECT_EQ(s.target, i % n);
    EXPECT_EQ(s.program, (s.target + round) % 4);
    families[s.target].insert(s.family);
    switch (s.family) {
      case SequenceFamily::kAlone:
        EXPECT_EQ(s.actions, std::vector<std::size_t>{s.target});
        break;
      case SequenceFamily::kAfterMem2reg:
        EXPECT_EQ(s.actions, (std::vector<std::size_t>{mem2reg, s.target}));
        break;
      case SequenceFamily::kAfterSroa:
        EXPECT_EQ(s.actions, (std::vector<std::size_t>{sroa, s.target}));
        break;
      case SequenceFamily::kTriple:
        ASSERT_EQ(s.actions.size(), 3u);
        EXPECT_EQ(s.actions.back(), s.target);
        break;
      case SequenceFamily::kRandom:
        EXPECT_EQ(s.actions.size(), 7u);
        EXPECT_NE(std::find(s.actions.begin(), s.actions.end(), s.target), s.actions.end());
        break;
    }
    for (const std::size_t a : s.actions) EXPECT_LT(a, n);
  }
  ASSERT_EQ(families.size(), n);
  for (const auto& [target, seen] : families) {
    EXPECT_EQ(seen.size(), kSequenceFamilies.size()) << actions[target].name;
  }
}

TEST(ValidationPlanTest, TheSeedDecidesTheRandomPartsAndNothingElse) {
  const std::vector<CampaignAction> actions = tableActions();
  PlanOptions options;
  options.sequences = 5 * actions.size();
  auto a = planSequences(actions, 3, options);
  auto b = planSequences(actions, 3, options);
  options.seed = 2;
  auto c = planSequences(actions, 3, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool differs = false;
  for (std::size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].actions, (*b)[i].actions);
    EXPECT_EQ((*a)[i].family, (*c)[i].family);
    differs |= (*a)[i].actions != (*c)[i].actions;
  }
  EXPECT_TRUE(differs);
}

TEST(ValidationPlanTest, BadPlansAndPutBacksAreClearErrors) {
  const std::vector<CampaignAction> actions = tableActions();
  EXPECT_EQ(planSequences(actions, 0, {}).status().code(), ErrorCode::kInvalidArgument);
  PlanOptions focus;
  focus.focus = {"no-such-pass"};
  auto unknown = planSequences(actions, 1, focus);
  EXPECT_NE(unknown.status().message().find("no-such-pass"), std::string::npos);
  EXPECT_EQ(campaignActions(*passTable(), {"gvn"}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(campaignActions(*passTable(), {"not-a-pass"}).ok());
  EXPECT_FALSE(campaignActions(*passTable(), {"structurizecfg", "structurizecfg"}).ok());
  auto putBack = campaignActions(*passTable(), {"structurizecfg"});
  ASSERT_TRUE(putBack.ok()) << putBack.status().toString();
  EXPECT_EQ(putBack->back().name, "structurizecfg");
  EXPECT_FALSE(putBack->back().tableIndex.has_value());
  EXPECT_FALSE(passTable()->find("structurizecfg").has_value())
      << "structurizecfg miscompiles (docs/actions.md): it must not be an action";
}

TEST(ValidationCampaignTest, AMiscompileIsPinnedOnTheFirstActionAfterWhichItShows) {
  const std::vector<CampaignProgram> programs = kilnBench({"bfs", "quicksort"});
  ValidationOptions options;
  options.plan.sequences = 5 * 6;
  options.plan.randomSteps = 12;
  options.plan.focus = {"mem2reg", "sroa", "simplifycfg", "instcombine", "gvn", "licm"};
  options.threads = 2;
  auto report = runValidationCampaign(passTable(), programs, allocaCheck, options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->programs.size(), 2u);
  EXPECT_EQ(report->sequences, options.plan.sequences);
  ASSERT_GT(report->miscompiles, 0u);
  ASSERT_EQ(report->reproducers.size(), report->miscompiles);
  std::uint64_t pinned = 0;
  for (const PassVerdicts& pass : report->passes) pinned += pass.miscompiles;
  EXPECT_EQ(pinned, report->miscompiles);
  for (const Reproducer& found : report->reproducers) {
    // Replayed: as many allocas as it came with before the culprit, fewer after.
    const std::string name = found.program.substr(found.program.find('/') + 1);
    auto state = testing::loadKilnBenchProgram(name);
    ASSERT_NE(state, nullptr);
    const std::size_t start = allocas(*state);
    for (std::size_t i = 0; i < found.sequence.size(); ++i) {
      EXPECT_GE(allocas(*state), start) << found.sequence[i] << " is not the first culprit";
      ASSERT_TRUE(state->applyPass(*passTable()->find(found.sequence[i])).ok());
    }
    EXPECT_LT(allocas(*state), start) << "the reproducer does not reproduce";
  }
  // The same campaign on one thread gives the same report.
  options.threads = 1;
  auto alone = runValidationCampaign(passTable(), programs, allocaCheck, options);
  ASSERT_TRUE(alone.ok());
  ASSERT_EQ(alone->reproducers.size(), report->reproducers.size());
  for (std::size_t i = 0; i < alone->reproducers.size(); ++i) {
    EXPECT_EQ(alone->reproducers[i].sequence, report->reproducers[i].sequence);
  }
  for (std::size_t i = 0; i < alone->passes.size(); ++i) {
    EXPECT_EQ(alone->passes[i].tried, report->passes[i].tried) << alone->passes[i].pass;
    EXPECT_EQ(alone->passes[i].miscompiles, report->passes[i].miscompiles);
  }
}

TEST(ValidationCampaignTest, AProgramThatCannotBeCheckedIsLeftOutWithItsReason) {
  const std::vector<CampaignProgram> programs = kilnBench({"bfs", "adler32"});
  BehaviourCheck check = [](std::size_t program, const ModuleState&,
                            const ModuleState&) -> Result<Behaviour> {
    if (program == 1) return invalidArgument("the benchmark as it came does not build");
    return Behaviour{};
  };
  ValidationOptions options;
  options.plan.sequences = 10;
  auto report = runValidationCampaign(passTable(), programs, check, options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->programs, std::vector<std::string>{"kiln-bench-v0/bfs"});
  ASSERT_EQ(report->excluded.size(), 1u);
  EXPECT_EQ(report->excluded[0].program, "kiln-bench-v0/adler32");
  EXPECT_NE(report->excluded[0].reason.find("does not build"), std::string::npos);
  EXPECT_EQ(report->miscompiles, 0u);

  BehaviourCheck flaky = [](std::size_t, const ModuleState&, const ModuleState&) {
    return Result<Behaviour>(Behaviour{false, "output", "differs from itself"});
  };
  auto none = runValidationCampaign(passTable(), programs, flaky, options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("does not behave as itself"), std::string::npos)
      << none.status().message();
  EXPECT_EQ(
      runValidationCampaign(passTable(), {{"junk", "not bitcode"}}, check, options).status().code(),
      ErrorCode::kInvalidArgument);
}

TEST(CampaignDocsTest, ARunRendersFromItsJsonAndBadJsonSaysSo) {
  const std::string json = R"({"title": "t", "rows": [
    {"figure": "run", "command": "kiln bench actions --validate", "date": "d", "machine": "m"},
    {"figure": "campaign", "asan": "yes", "programs": 2, "sequences": 7, "miscompiles": 1},
    {"figure": "programs", "names": "kiln-bench-v0/bfs, csmith-v0/1"},
    {"figure": "family", "family": "alone", "sequences": 7, "miscompiles": 1},
    {"figure": "pass", "pass": "gvn", "space": "PassesAll", "tried": 5, "miscompiles": 0},
    {"figure": "pass", "pass": "structurizecfg", "space": "put back", "tried": 2,
     "miscompiles": 1},
    {"figure": "miscompile", "program": "kiln-bench-v0/bfs", "sequence": "structurizecfg",
     "kind": "output", "message": "a|b"},
    {"figure": "excluded", "program": "llvm-stress-v0/1", "reason": "no main"}], "notes": []})";
  const std::string text = campaignRunMarkdown(json, "x.json");
  EXPECT_NE(text.find("Written by `kiln bench actions --validate` on d (m)"), std::string::npos);
  EXPECT_NE(text.find("**1 miscompiles**"), std::string::npos) << text;
  EXPECT_NE(text.find("| `structurizecfg` | put back | 2 |"), std::string::npos) << text;
  // With a pass put back, the rows shown are its own and the culprits'.
  EXPECT_EQ(text.find("`gvn`"), std::string::npos) << text;
  EXPECT_NE(text.find("| kiln-bench-v0/bfs | `structurizecfg` | output: a\\|b |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| llvm-stress-v0/1 | no main |"), std::string::npos) << text;
  EXPECT_NE(campaignRunMarkdown("{not json", "x.json").find("docs/data/x.json is not"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::llvm_engine
