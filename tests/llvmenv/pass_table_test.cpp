// PassTable: generated from LLVM's registry, at least 100 passes, filtered,
// stable order, explicit pipelines.
#include <set>

#include "llvmenv/compiler_gym_flags.h"
#include "tests/llvmenv/test_support.h"

namespace kiln::llvmenv {
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

TEST(PassTableTest, NamesAreUniqueAndSorted) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    const PassInfo& pass = passTable()->at(i);
    EXPECT_TRUE(seen.insert(pass.name).second) << pass.name;
    if (i > 0) {
      EXPECT_LT(passTable()->at(i - 1).name, pass.name);
    }
    EXPECT_EQ(passTable()->find(pass.name), i);
  }
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

TEST(PassTableTest, PipelinesAreExplicitAndWrapped) {
  const PassInfo& licm = passTable()->at(*passTable()->find("licm"));
  EXPECT_EQ(licm.kind, PassKind::kLoop);
  EXPECT_TRUE(licm.pipeline.starts_with("function(loop-mssa(licm")) << licm.pipeline;
  const PassInfo& gvn = passTable()->at(*passTable()->find("gvn"));
  EXPECT_EQ(gvn.kind, PassKind::kFunction);
  EXPECT_TRUE(gvn.pipeline.starts_with("function(gvn")) << gvn.pipeline;
  const PassInfo& inliner = passTable()->at(*passTable()->find("inline"));
  EXPECT_EQ(inliner.kind, PassKind::kCgscc);
  EXPECT_TRUE(inliner.pipeline.starts_with("cgscc(inline")) << inliner.pipeline;
  const PassInfo& combine = passTable()->at(*passTable()->find("instcombine"));
  EXPECT_NE(combine.pipeline.find("no-verify-fixpoint"), std::string::npos) << combine.pipeline;
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
  const PassInfo& unify = passTable()->at(*passTable()->find("unify-loop-exits"));
  EXPECT_EQ(unify.carries, "lower-switch");
  EXPECT_TRUE(unify.needsBranchTerminators);
  EXPECT_EQ(unify.pipeline, "function(lower-switch,unify-loop-exits)");
  const PassInfo& memssa = passTable()->at(*passTable()->find("early-cse-memssa"));
  EXPECT_EQ(memssa.flag, "-early-cse-memssa");
  EXPECT_EQ(memssa.pipeline, "function(early-cse<memssa>)");
  EXPECT_NE(memssa.pipeline, passTable()->at(*passTable()->find("early-cse")).pipeline);
}

}  // namespace
}  // namespace kiln::llvmenv
