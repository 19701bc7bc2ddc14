// Whole episodes against Debian's opt-19 and llc-19. Inputs are compiled from
// tests/mlgo/data/*.c with clang-19 at test time; every step has a deadline.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "common/process/subprocess.h"
#include "compilers/mlgo_channel/interactive_compiler.h"
#include "tests/mlgo_channel/test_support.h"
#include "tests/support/process_probe.h"

namespace kiln::mlgo_channel {
namespace {

using std::chrono::milliseconds;
using testing::in;
using testing::noChildProcesses;
using testing::TempDir;

constexpr milliseconds kStep{5000};
const std::filesystem::path kData = std::filesystem::path(KILN_MLGO_TEST_SOURCE_DIR) / "data";

std::string readFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// clang-19 without LLVM passes keeps the functions inlinable (-O0 would add noinline).
std::filesystem::path compileToBitcode(const TempDir& dir, const std::string& source,
                                       bool optimize) {
  std::filesystem::path out = dir.path() / (source + ".bc");
  std::vector<std::string> argv{
      "clang-19", "-O2", "-emit-llvm", "-c", (kData / source).string(), "-o", out.string()};
  if (!optimize) argv.insert(argv.begin() + 2, {"-Xclang", "-disable-llvm-passes"});
  Result<ProcessOutput> run = runSubprocess(argv, milliseconds(20000));
  EXPECT_TRUE(run.ok()) << run.status().toString();
  EXPECT_TRUE(run.ok() && run->status.success()) << (run.ok() ? run->stderrText : "");
  return out;
}

// The compiler runs confined to its session's directory (it reads nothing
// else but the system's files), so its input goes there, as a worker puts it.
std::filesystem::path inSession(const TempDir& session, const std::filesystem::path& input) {
  std::filesystem::path copy = session.path() / input.filename();
  std::filesystem::copy_file(input, copy, std::filesystem::copy_options::overwrite_existing);
  return copy;
}

enum class Answer { kDefault, kAlwaysInline };

struct InlinerRun {
  std::string output;
  std::vector<std::int64_t> defaults;
  double microsPerDecision = 0;
};

InlinerRun runInlinerEpisode(const std::filesystem::path& input, Answer answer) {
  TempDir session;
  CompilerOptions options;
  options.kind = AdvisorKind::kInliner;
  options.sessionDirectory = session.path();
  options.input = inSession(session, input);
  InlinerRun run;
  Result<InteractiveCompiler> compiler = InteractiveCompiler::start(options, in(kStep));
  EXPECT_TRUE(compiler.ok()) << compiler.status().toString();
  if (!compiler.ok()) return run;
  EXPECT_EQ(compiler->header().features.size(), 39u);
  EXPECT_EQ(compiler->header().advice.name, "inlining_decision");
  auto start = std::chrono::steady_clock::now();
  while (true) {
    Result<std::optional<Observation>> obs = compiler->next(in(kStep));
    EXPECT_TRUE(obs.ok()) << obs.status().toString();
    if (!obs.ok() || !obs->has_value()) break;
    Result<std::int64_t> fallback = compiler->defaultAdvice(**obs);
    EXPECT_TRUE(fallback.ok()) << fallback.status().toString();
    run.defaults.push_back(fallback.ok() ? *fallback : 0);
    std::int64_t decision = answer == Answer::kDefault ? run.defaults.back() : 1;
    Status sent = compiler->advise(Value(decision), in(kStep));
    EXPECT_TRUE(sent.ok()) << sent.toString();
    if (!sent.ok()) break;
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  if (!run.defaults.empty()) {
    run.microsPerDecision =
        std::chrono::duration<double, std::micro>(elapsed).count() / run.defaults.size();
  }
  Result<CompileOutcome> outcome = compiler->finish(in(kStep));
  EXPECT_TRUE(outcome.ok()) << outcome.status().toString();
  if (outcome.ok()) {
    EXPECT_EQ(outcome->decisions, static_cast<std::int64_t>(run.defaults.size()));
    run.output = readFile(outcome->output);
  }
  compiler = Result<InteractiveCompiler>(internalError("released"));
  EXPECT_TRUE(noChildProcesses());
  // No FIFO, no log: the input put there and the output.
  EXPECT_EQ(session.entries(), (std::vector<std::string>{input.filename().string(), "output.bc"}));
  return run;
}

TEST(MlgoLlvmIntegrationTest, InlinerEpisodeWithDefaultAnswersMatchesTheDefaultPolicy) {
  TempDir dir;
  std::filesystem::path input = compileToBitcode(dir, "inline_sample.c", false);

  InlinerRun byDefault = runInlinerEpisode(input, Answer::kDefault);
  ASSERT_FALSE(byDefault.defaults.empty());
  // The program has call sites on both sides of the heuristic.
  EXPECT_NE(std::count(byDefault.defaults.begin(), byDefault.defaults.end(), 1), 0);
  EXPECT_NE(std::count(byDefault.defaults.begin(), byDefault.defaults.end(), 0), 0);
  std::cout << "[ info ] inliner: " << byDefault.defaults.size() << " decisions, "
            << byDefault.microsPerDecision << " us per next()+advise()\n";

  // Reference: the same advisor in "default" mode, no channel.
  std::filesystem::path reference = dir.path() / "reference.bc";
  Result<ProcessOutput> plain =
      runSubprocess({"opt-19", "-passes=scc-oz-module-inliner", "-enable-ml-inliner=default",
                     input.string(), "-o", reference.string()},
                    milliseconds(20000));
  ASSERT_TRUE(plain.ok() && plain->status.success()) << plain.status().toString();
  EXPECT_EQ(byDefault.output.size(), readFile(reference).size());
  EXPECT_TRUE(byDefault.output == readFile(reference)) << "bitcode differs from the default run";

  // The answers matter: inlining everywhere gives a different module.
  InlinerRun always = runInlinerEpisode(input, Answer::kAlwaysInline);
  EXPECT_FALSE(always.output.empty());
  EXPECT_NE(always.output, byDefault.output);
  EXPECT_TRUE(noChildProcesses());
}

TEST(MlgoLlvmIntegrationTest, RegallocEvictionEpisodeAnsweringZero) {
  TempDir dir;
  std::filesystem::path input = compileToBitcode(dir, "regalloc_pressure.c", true);
  TempDir session;
  CompilerOptions options;
  options.kind = AdvisorKind::kRegallocEviction;
  options.sessionDirectory = session.path();
  options.input = inSession(session, input);
  Result<InteractiveCompiler> compiler = InteractiveCompiler::start(options, in(kStep));
  ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
  const ChannelHeader& header = compiler->header();
  EXPECT_EQ(header.features.size(), 21u);
  EXPECT_EQ(header.advice.name, "index_to_evict");
  std::optional<std::size_t> mask = header.featureIndex("mask");
  std::optional<std::size_t> progress = header.featureIndex("progress");
  ASSERT_TRUE(mask && progress);
  int decisions = 0;
  while (true) {
    Result<std::optional<Observation>> obs = compiler->next(in(kStep));
    ASSERT_TRUE(obs.ok()) << obs.status().toString();
    if (!obs->has_value()) break;
    EXPECT_EQ((*obs)->context, "pressure");
    Result<Value> maskValue = decodeFeature(header, **obs, *mask);
    ASSERT_TRUE(maskValue.ok()) << maskValue.status().toString();
    const auto* maskTensor = maskValue->getIf<Int64Tensor>();
    ASSERT_NE(maskTensor, nullptr);
    EXPECT_EQ(maskTensor->values.size(), 33u);
    EXPECT_TRUE(decodeFeature(header, **obs, *progress).value().is<FloatTensor>());
    ASSERT_TRUE(compiler->advise(Value(std::int64_t{0}), in(kStep)).ok());
    ++decisions;
  }
  EXPECT_GT(decisions, 0);
  std::cout << "[ info ] regalloc: " << decisions << " eviction decisions\n";
  Result<CompileOutcome> outcome = compiler->finish(in(kStep));
  ASSERT_TRUE(outcome.ok()) << outcome.status().toString();
  EXPECT_EQ(readFile(outcome->output).substr(0, 4),
            "\x7f"
            "ELF");
  compiler = Result<InteractiveCompiler>(internalError("released"));
  EXPECT_TRUE(noChildProcesses());
  EXPECT_EQ(session.entries(), (std::vector<std::string>{"output.o", input.filename().string()}));
}

TEST(MlgoLlvmIntegrationTest, AbandonedEpisodeKillsTheCompiler) {
  TempDir dir;
  std::filesystem::path input = compileToBitcode(dir, "inline_sample.c", false);
  TempDir session;
  CompilerOptions options;
  options.sessionDirectory = session.path();
  options.input = inSession(session, input);
  pid_t pid = -1;
  {
    Result<InteractiveCompiler> compiler = InteractiveCompiler::start(options, in(kStep));
    ASSERT_TRUE(compiler.ok()) << compiler.status().toString();
    pid = compiler->pid();
    Result<std::optional<Observation>> obs = compiler->next(in(kStep));
    ASSERT_TRUE(obs.ok() && obs->has_value()) << obs.status().toString();
    // No answer: opt-19 now blocks reading BASE.in until it is killed.
  }
  EXPECT_TRUE(testsupport::processGone(pid));
  EXPECT_TRUE(noChildProcesses());
  EXPECT_EQ(session.entries(), (std::vector<std::string>{input.filename().string()}));
}

}  // namespace
}  // namespace kiln::mlgo_channel
