// PassTable: generated from LLVM's registry, at least 100 passes, filtered,
// stable order; each action runs its own name (the few that do not say why);
// single passes first (PassesAll), pipelines after them (PassesAndPipelines).
#include <set>

#include "compilers/llvm_engine/compiler_gym_flags.h"
#include "compilers/llvm_engine/pass_runner.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::passTable;

TEST(PassTableTest, HasAtLeastOneHundredPasses) { EXPECT_GE(passTable()->size(), 100u); }

TEST(PassTableTest, OrderAndFingerprintAreStable) {
  auto again = PassTable::fromRegistry();
  ASSERT_TRUE(again.ok());
  ASSERT_EQ((*again)->size(), passTable()->size());
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    EXPECT_EQ((*again)->at(i).name, passTable()->at(i).name);
    EXPECT_EQ((*again)->at(i).pipeline, passTable()->at(i).pipeline);
  }
  EXPECT_EQ((*again)->fingerprint(), passTable()->fingerprint());
  EXPECT_EQ(passTable()->fingerprint().size(), 40u);
}

TEST(PassTableTest, NamesAreUniqueAndSortedSinglePassesFirst) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    const PassInfo& pass = passTable()->at(i);
    EXPECT_TRUE(seen.insert(pass.name).second) << pass.name;
    EXPECT_EQ(pass.isPipeline(), i >= passTable()->singlePassCount()) << pass.name;
    if (i > 0 && i != passTable()->singlePassCount()) {
      EXPECT_LT(passTable()->at(i - 1).name, pass.name);
    }
    EXPECT_EQ(passTable()->find(pass.name), i);
  }
}

TEST(PassTableTest, EachSpaceIsAPrefixOfTheTable) {
  ASSERT_EQ(kActionSpaces.size(), 2u);
  EXPECT_EQ(kActionSpaces[0].name, "PassesAll");
  EXPECT_EQ(passTable()->spaceSize(0), passTable()->singlePassCount());
  EXPECT_EQ(passTable()->spaceSize(1), passTable()->size());
  EXPECT_EQ(passTable()->spaceSize(2), 0u);
  EXPECT_GE(passTable()->spaceSize(0), 100u);
  EXPECT_GT(passTable()->spaceSize(1), passTable()->spaceSize(0));
}

TEST(PassTableTest, ContainsTheUsualOptimizations) {
  for (const char* name : {"gvn", "instcombine", "sroa", "mem2reg", "licm", "loop-unroll",
                           "simplifycfg", "inline", "globaldce", "loop-rotate", "indvars",
                           "slp-vectorizer", "loop-vectorize", "argpromotion", "globalopt"}) {
    EXPECT_TRUE(passTable()->find(name).has_value()) << name;
  }
}

TEST(PassTableTest, DropsPrintersVerifiersAndInstrumentation) {
  for (const PassInfo& pass : passTable()->passes()) {
    EXPECT_FALSE(pass.name.starts_with("print")) << pass.name;
    EXPECT_FALSE(pass.name.starts_with("verify")) << pass.name;
    EXPECT_FALSE(pass.name.starts_with("dot-")) << pass.name;
    EXPECT_FALSE(pass.name.starts_with("invalidate")) << pass.name;
    EXPECT_FALSE(pass.name.starts_with("no-op")) << pass.name;
  }
  for (const char* name :
       {"asan", "msan", "tsan", "trigger-crash-module", "metarenamer", "attributor", "newgvn",
        "gvn-hoist", "gvn-sink", "instcount", "aa-eval", "pgo-instr-gen", "memprof-use"}) {
    EXPECT_FALSE(passTable()->find(name).has_value()) << name;
  }
  EXPECT_FALSE(passTable()->dropped().empty());
}

TEST(PassTableTest, AnActionRunsItsNameUnlessItsNoteSaysWhyNot) {
  std::vector<std::string> noted;
  for (const PassInfo& pass : passTable()->passes()) {
    ASSERT_FALSE(pass.runs.empty()) << pass.name;
    if (pass.note.empty()) {
      EXPECT_EQ(pass.pipeline, pass.name);
    } else {
      noted.push_back(pass.name);
    }
  }
  EXPECT_EQ(noted, (std::vector<std::string>{"early-cse-memssa", "instcombine",
                                             "lower-switch-then-unify-loop-exits"}));
  const PassInfo& licm = passTable()->at(*passTable()->find("licm"));
  EXPECT_EQ(licm.kind, PassKind::kLoop);
  EXPECT_EQ(licm.runs, std::vector<std::string>{"licm"});
  const PassInfo& inliner = passTable()->at(*passTable()->find("inline"));
  EXPECT_EQ(inliner.kind, PassKind::kCgscc);
  EXPECT_EQ(inliner.pipeline, "inline");
  const PassInfo& combine = passTable()->at(*passTable()->find("instcombine"));
  EXPECT_EQ(combine.pipeline, "instcombine<no-verify-fixpoint>");
  // The inliner wrappers are the inliner (a mandatory round first or not).
  for (const char* name : {"inliner-wrapper", "inliner-wrapper-no-mandatory-first"}) {
    EXPECT_EQ(passTable()->at(*passTable()->find(name)).runs, std::vector<std::string>{"inline"})
        << name;
  }
}

TEST(PassTableTest, PipelinesAreOnlyInTheSecondSpace) {
  // -Oz's inliner with the whole function simplification pipeline.
  const std::size_t oz = *passTable()->find("scc-oz-module-inliner");
  EXPECT_GE(oz, passTable()->spaceSize(0));
  const PassInfo& inliner = passTable()->at(oz);
  EXPECT_EQ(inliner.pipeline, "scc-oz-module-inliner");
  EXPECT_GT(inliner.runs.size(), 20u);
  EXPECT_EQ(inliner.runs.front(), "inline");
  for (std::size_t i = passTable()->spaceSize(0); i < passTable()->size(); ++i) {
    EXPECT_TRUE(passTable()->at(i).isPipeline()) << passTable()->at(i).name;
  }
}

TEST(PassTableTest, PassesRunByReadsLlvmsOwnPrinting) {
  EXPECT_EQ(*passesRunBy("gvn"), std::vector<std::string>{"gvn"});
  EXPECT_EQ(*passesRunBy("licm"), std::vector<std::string>{"licm"});
  EXPECT_EQ(*passesRunBy("lower-switch,unify-loop-exits"),
            (std::vector<std::string>{"lower-switch", "unify-loop-exits"}));
  EXPECT_EQ(*passesRunBy("require<globals-aa>,function(sroa,gvn,sroa)"),
            (std::vector<std::string>{"sroa", "gvn"}));
  EXPECT_EQ(*passesRunBy("openmp-opt-postlink"), std::vector<std::string>{"openmp-opt"});
  EXPECT_EQ(passesRunBy("no-such-pass").status().code(), ErrorCode::kInvalidArgument);
}

TEST(PassTableTest, FlagsAreCompilerGymsWhereItHadOneAndUnique) {
  const auto flagOf = [](const char* name) {
    return passTable()->at(*passTable()->find(name)).flag;
  };
  EXPECT_EQ(flagOf("gvn"), "-gvn");
  EXPECT_EQ(flagOf("mem2reg"), "-mem2reg");
  EXPECT_EQ(flagOf("instcombine"), "-instcombine");
  EXPECT_EQ(flagOf("function-attrs"), "-functionattrs");
  EXPECT_EQ(flagOf("lower-switch"), "-lowerswitch");
  EXPECT_EQ(flagOf("flatten-cfg"), "-flattencfg");
  EXPECT_EQ(flagOf("loop-flatten"), "-loop-flatten");  // not in CompilerGym: -<name>
  std::set<std::string> flags;
  for (const PassInfo& pass : passTable()->passes()) {
    EXPECT_TRUE(flags.insert(pass.flag).second) << pass.flag;
    EXPECT_TRUE(pass.flag.starts_with("-")) << pass.name;
  }
  // Every CompilerGym flag that names an action names one in this table,
  // or a pass that was dropped with a reason.
  std::set<std::string> dropped;
  for (const DroppedPass& d : passTable()->dropped()) dropped.insert(d.name);
  for (const CompilerGymFlag& flag : compilerGymFlags()) {
    if (flag.action.empty()) {
      EXPECT_FALSE(flag.note.empty()) << flag.flag;
      continue;
    }
    const std::string action(flag.action);
    EXPECT_TRUE(passTable()->find(action).has_value() || dropped.contains(action)) << flag.flag;
  }
}

TEST(PassTableTest, PrerequisitesAndVariantsAreInThePipeline) {
  EXPECT_FALSE(passTable()->find("unify-loop-exits").has_value());
  const PassInfo& unify = passTable()->at(*passTable()->find("lower-switch-then-unify-loop-exits"));
  EXPECT_TRUE(unify.needsBranchTerminators);
  EXPECT_TRUE(unify.isPipeline());
  EXPECT_EQ(unify.pipeline, "lower-switch,unify-loop-exits");
  bool explained = false;
  for (const DroppedPass& d : passTable()->dropped()) {
    explained |= d.name == "unify-loop-exits" &&
                 d.reason.find("lower-switch-then-unify-loop-exits") != std::string::npos;
  }
  EXPECT_TRUE(explained);
  const PassInfo& memssa = passTable()->at(*passTable()->find("early-cse-memssa"));
  EXPECT_EQ(memssa.flag, "-early-cse-memssa");
  EXPECT_EQ(memssa.pipeline, "early-cse<memssa>");
  EXPECT_FALSE(memssa.isPipeline());
}

}  // namespace
}  // namespace kiln::llvm_engine
