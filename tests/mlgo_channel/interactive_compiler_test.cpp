// InteractiveCompiler against tests/mlgo_channel/fake_compiler.py: every failure path
// must kill and reap the child and leave the session directory empty.
#include "compilers/mlgo_channel/interactive_compiler.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/mlgo_channel/test_support.h"
#include "tests/support/process_probe.h"

namespace kiln::mlgo_channel {
namespace {

using std::chrono::milliseconds;
using testing::in;
using testing::noChildProcesses;
using testing::TempDir;
using testsupport::processGone;

constexpr milliseconds kGenerous{5000};

class InteractiveCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = dir_.path() / "input.bc";
    std::ofstream(input_) << "not really bitcode";
  }
  void TearDown() override {
    std::filesystem::remove(input_);
    EXPECT_TRUE(dir_.entries().empty()) << "left in the session directory: " << listing();
    EXPECT_TRUE(noChildProcesses());
  }
  std::string listing() const {
    std::string all;
    for (const auto& name : dir_.entries()) all += name + " ";
    return all;
  }
  CompilerOptions options(const std::string& mode) const {
    CompilerOptions o;
    o.kind = AdvisorKind::kInliner;
    o.sessionDirectory = dir_.path();
    o.input = input_;
    o.compiler = std::string(KILN_MLGO_TEST_SOURCE_DIR) + "/fake_compiler.py";
    o.extraFlags = {"--fake-mode=" + mode};
    return o;
  }

  TempDir dir_;
  std::filesystem::path input_;
};

TEST_F(InteractiveCompilerTest, GoodEpisodeAnsweredWithTheDefault) {
  Result<InteractiveCompiler> compiler = InteractiveCompiler::start(options("good"), in(kGenerous));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  EXPECT_EQ(compiler->header().features.size(), 3u);
  EXPECT_EQ(compiler->description().adviceName, compiler->header().advice.name);
  std::vector<std::int64_t> defaults;
  while (true) {
    Result<std::optional<Observation>> obs = compiler->next(in(kGenerous));
    ASSERT_TRUE(obs.ok()) << obs.status().toString();
    if (!obs->has_value()) break;
    EXPECT_EQ((*obs)->context, "main");
    Result<std::int64_t> answer = compiler->defaultAdvice(**obs);
    ASSERT_TRUE(answer.ok()) << answer.status().toString();
    defaults.push_back(*answer);
    ASSERT_TRUE(compiler->advise(Value(*answer), in(kGenerous)).ok());
  }
  EXPECT_EQ(defaults, (std::vector<std::int64_t>{1, 0, 1}));
  Result<CompileOutcome> outcome = compiler->finish(in(kGenerous));
  ASSERT_TRUE(outcome.ok()) << outcome.status().toString();
  EXPECT_TRUE(outcome->status.success());
  EXPECT_EQ(outcome->decisions, 3);
  std::ifstream output(outcome->output);
  std::string text((std::istreambuf_iterator<char>(output)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "1,0,1");  // the answers reached the compiler in order
  pid_t pid = compiler->pid();
  compiler = Result<InteractiveCompiler>(internalError("released"));
  EXPECT_TRUE(processGone(pid));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "output.bc"));  // the caller's now
  std::filesystem::remove(dir_.path() / "output.bc");
}

TEST_F(InteractiveCompilerTest, CompilerThatExitsEarlyReportsItsStderr) {
  auto start = std::chrono::steady_clock::now();
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("exit-early"), in(kGenerous));
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(compiler.status().message().find("exited with code 3"), std::string::npos)
      << compiler.status().toString();
  EXPECT_NE(compiler.status().message().find("cannot read its input"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
}

TEST_F(InteractiveCompilerTest, CompilerThatNeverOpensTimesOut) {
  auto start = std::chrono::steady_clock::now();
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("hang-before-open"), in(milliseconds(300)));
  EXPECT_EQ(compiler.status().code(), ErrorCode::kTimeout) << compiler.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST_F(InteractiveCompilerTest, CompilerThatHangsMidEpisodeIsKilled) {
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("hang-after-header"), in(kGenerous));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  pid_t pid = compiler->pid();
  auto start = std::chrono::steady_clock::now();
  Result<std::optional<Observation>> obs = compiler->next(in(milliseconds(300)));
  EXPECT_EQ(obs.status().code(), ErrorCode::kTimeout) << obs.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  EXPECT_FALSE(processGone(pid));
  compiler = Result<InteractiveCompiler>(internalError("released"));
  EXPECT_TRUE(processGone(pid));
}

TEST_F(InteractiveCompilerTest, CrashInsideARecordIsACompileError) {
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("crash-mid-record"), in(kGenerous));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  Result<std::optional<Observation>> first = compiler->next(in(kGenerous));
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().toString();
  ASSERT_TRUE(compiler->advise(Value(std::int64_t{1}), in(kGenerous)).ok());
  Result<std::optional<Observation>> second = compiler->next(in(kGenerous));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kCompileError) << second.status().toString();
  EXPECT_NE(second.status().message().find("ended after"), std::string::npos);
  EXPECT_NE(second.status().message().find("crashed in the middle"), std::string::npos);
}

TEST_F(InteractiveCompilerTest, GarbageFromTheCompilerIsACompileError) {
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("garbage"), in(kGenerous));
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(compiler.status().message().find("bad header"), std::string::npos)
      << compiler.status().toString();
}

TEST_F(InteractiveCompilerTest, FailureAfterTheEpisodeCarriesTheStderrTail) {
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("fail-at-end"), in(kGenerous));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  EXPECT_EQ(compiler->finish(in(kGenerous)).status().code(), ErrorCode::kInvalidArgument);
  while (true) {
    Result<std::optional<Observation>> obs = compiler->next(in(kGenerous));
    ASSERT_TRUE(obs.ok()) << obs.status().toString();
    if (!obs->has_value()) break;
    ASSERT_TRUE(compiler->advise(Value(std::int64_t{0}), in(kGenerous)).ok());
  }
  Result<CompileOutcome> outcome = compiler->finish(in(kGenerous));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(outcome.status().message().find("exited with code 2"), std::string::npos);
  EXPECT_NE(outcome.status().message().find("LLVM ERROR: fake failure"), std::string::npos)
      << outcome.status().toString();
}

TEST_F(InteractiveCompilerTest, SuccessWithoutOutputIsACompileError) {
  Result<InteractiveCompiler> compiler =
      InteractiveCompiler::start(options("no-output"), in(kGenerous));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  while (true) {
    Result<std::optional<Observation>> obs = compiler->next(in(kGenerous));
    ASSERT_TRUE(obs.ok()) << obs.status().toString();
    if (!obs->has_value()) break;
    ASSERT_TRUE(compiler->advise(Value(std::int64_t{1}), in(kGenerous)).ok());
  }
  Result<CompileOutcome> outcome = compiler->finish(in(kGenerous));
  EXPECT_EQ(outcome.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(outcome.status().message().find("wrote no"), std::string::npos);
}

TEST_F(InteractiveCompilerTest, MissingCompilerOrInputIsNotFound) {
  CompilerOptions o = options("good");
  o.compiler = "kiln-no-such-compiler-19";
  EXPECT_EQ(InteractiveCompiler::start(o, in(kGenerous)).status().code(), ErrorCode::kNotFound);
  o = options("good");
  o.input = dir_.path() / "missing.bc";
  EXPECT_EQ(InteractiveCompiler::start(o, in(kGenerous)).status().code(), ErrorCode::kNotFound);
}

TEST(AdvisorKindTest, DescribesBothAdvisors) {
  AdvisorDescription inliner = describeAdvisor(AdvisorKind::kInliner);
  EXPECT_EQ(inliner.defaultCompiler, "opt-19");
  EXPECT_EQ(inliner.adviceName, "inlining_decision");
  EXPECT_EQ(inliner.defaultDecisionFeature, "inlining_default");
  EXPECT_EQ(inliner.defaultDecisionSlot, "callee_basic_block_count");
  EXPECT_EQ(describeAdvisor(AdvisorKind::kInliner, 21).defaultDecisionSlot, "inlining_default");
  std::vector<std::string> args =
      compilerArguments(inliner, "/s/chan", {"-x"}, "/s/in.bc", "/s/out.bc");
  EXPECT_EQ(args,
            (std::vector<std::string>{"-passes=scc-oz-module-inliner", "-enable-ml-inliner=release",
                                      "-inliner-interactive-include-default",
                                      "-inliner-interactive-channel-base=/s/chan", "-x", "/s/in.bc",
                                      "-o", "/s/out.bc"}));
  AdvisorDescription regalloc = describeAdvisor(AdvisorKind::kRegallocEviction);
  EXPECT_EQ(regalloc.defaultCompiler, "llc-19");
  EXPECT_EQ(regalloc.adviceName, "index_to_evict");
  EXPECT_FALSE(regalloc.defaultDecisionSlot.has_value());
  EXPECT_EQ(compilerArguments(regalloc, "/s/c", {}, "i.bc", "o.o")[2],
            "-regalloc-evict-interactive-channel-base=/s/c");
  EXPECT_EQ(defaultDecision(regalloc, ChannelHeader{}, Observation{}).status().code(),
            ErrorCode::kUnimplemented);
}

// LLVM's default build must run the pipeline the channel's build runs, with
// the module's flags: only the advisor mode may differ.
TEST(AdvisorKindTest, LlvmDefaultBuildRunsTheSamePipelineWithTheDefaultAdvisor) {
  AdvisorDescription inliner = describeAdvisor(AdvisorKind::kInliner);
  EXPECT_EQ(llvmDefaultArguments(inliner, {"-mcpu=x"}, "in.bc", "out.bc"),
            (std::vector<std::string>{"-passes=scc-oz-module-inliner", "-enable-ml-inliner=default",
                                      "-mcpu=x", "in.bc", "-o", "out.bc"}));
  AdvisorDescription regalloc = describeAdvisor(AdvisorKind::kRegallocEviction);
  EXPECT_EQ(llvmDefaultArguments(regalloc, {"-O2", "-relocation-model=pic"}, "in.bc", "out.o"),
            (std::vector<std::string>{"-regalloc-enable-advisor=default", "-filetype=obj", "-O2",
                                      "-relocation-model=pic", "in.bc", "-o", "out.o"}));
}

TEST(AdvisorKindTest, EvictionReferenceAnswerEvictsNothingWhenAllowed) {
  EXPECT_EQ(evictionReferenceAnswer(Int64Tensor{{4}, {0, 1, 1, 1}}), 3);
  EXPECT_EQ(evictionReferenceAnswer(Int64Tensor{{4}, {0, 0, 1, 0}}), 2);
  EXPECT_EQ(evictionReferenceAnswer(Int64Tensor{{4}, {0, 0, 0, 0}}), std::nullopt);
  EXPECT_EQ(evictionReferenceAnswer(Int64Tensor{{0}, {}}), std::nullopt);
}

// The reference answer is read from the "mask" feature for eviction and from
// LLVM 19's default-decision slot for the inliner, wherever they are on the wire.
TEST(AdvisorKindTest, ReferenceAnswerReadsEachAdvisorsFeature) {
  auto feature = [](std::string name, std::int64_t count) {
    FeatureSpec spec;
    spec.name = std::move(name);
    spec.shape = {count};
    EXPECT_TRUE(computeSizes(spec).ok());
    return spec;
  };
  auto int64s = [](std::initializer_list<std::int64_t> values) {
    std::string bytes;
    for (std::int64_t v : values) bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
    return bytes;
  };
  AdvisorDescription regalloc = describeAdvisor(AdvisorKind::kRegallocEviction);
  ChannelHeader evictions;
  evictions.features = {feature("is_free", 3), feature("mask", 3)};
  Observation decision{0, "f", int64s({1, 1, 1, 0, 1, 0})};
  Result<std::size_t> mask = referenceFeatureIndex(regalloc, evictions);
  ASSERT_TRUE(mask.ok()) << mask.status().toString();
  EXPECT_EQ(*mask, 1U);
  EXPECT_EQ(referenceAnswerAt(regalloc, evictions, decision, *mask).value(), 1);
  Observation nothingAllowed{1, "f", int64s({1, 1, 1, 0, 0, 0})};
  EXPECT_EQ(referenceAnswerAt(regalloc, evictions, nothingAllowed, *mask).status().code(),
            ErrorCode::kCompileError);
  EXPECT_EQ(referenceFeatureIndex(regalloc, ChannelHeader{}).status().code(),
            ErrorCode::kInvalidArgument);

  AdvisorDescription inliner = describeAdvisor(AdvisorKind::kInliner);
  ChannelHeader calls;
  calls.features = {feature("sroa_savings", 1), feature("callee_basic_block_count", 1),
                    feature("inlining_default", 1)};
  Result<std::size_t> slot = referenceFeatureIndex(inliner, calls);
  ASSERT_TRUE(slot.ok()) << slot.status().toString();
  EXPECT_EQ(referenceAnswerAt(inliner, calls, Observation{0, "", int64s({7, 1, 0})}, *slot).value(),
            1);
}

}  // namespace
}  // namespace kiln::mlgo_channel
