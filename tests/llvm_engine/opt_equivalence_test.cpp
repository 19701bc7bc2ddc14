// kiln against real opt-19, on the name of every action: an action named
// after an LLVM pass does what `opt-19 -passes=<name>` does, applied once and
// then again and again. kiln runs each step with its own pass manager and
// hands the module on as bitcode, so the reference is one opt-19 call per
// application, each reading the previous call's output file. The IR text
// must be equal after every application, but for the two lines that name
// the input file rather than the program ("; ModuleID = ",
// "source_filename = "): kiln's canonical text against what `opt-19 -S`
// prints for opt's output file (LLVM's bitcode reader and printer, run in
// this process to spare a process per application; the sequence and
// baseline tests below run opt-19 -S itself). Actions whose -passes= text is
// not their name (docs/actions.md says why) are compared with opt given that
// text; `instcombine` with opt's bare `instcombine`, and with
// `instcombine<no-verify-fixpoint>` only where opt stops on its fixpoint
// check. Where LLVM itself fails (a crash) on a module, it must fail in opt
// at the same application: kiln ends the episode there with a compile error
// (llvm-stress-v0/1 crashes scalarizer and interleaved-load-combine in both);
// the test lists those actions.
//
// In the suite: every action x 3 applications on kiln-bench-v0's bfs and
// nqueens and csmith-v0 seeds 1 and 2, one ctest test per module. The whole
// matrix (every kiln-bench-v0 program, csmith-v0 seeds 1-10, llvm-stress-v0
// seeds 1-4, and each *.bc under KILN_OPT_EQUIVALENCE_CORPUS, e.g. an
// installed debian-mini) runs with KILN_OPT_EQUIVALENCE=full:
//   KILN_OPT_EQUIVALENCE=full build/tests/llvmenv/llvmenv_opt_equivalence_test
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "common/process/subprocess.h"
#include "compilers/llvm_engine/ir_text.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "programs/datasets/generators.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

namespace fs = std::filesystem;
using testing::benchmarkPath;
using testing::loadBenchmark;
using testing::passTable;
using testing::readFile;

constexpr int kApplications = 3;

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(fs::temp_directory_path() /
              ("kiln-opt-equivalence-" + std::to_string(::getpid()) + "-" + tag)) {
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// One opt-19 call; its stdout (up to 64 MB) or the reason it failed.
Result<std::string> opt(std::vector<std::string> args) {
  args.insert(args.begin(), KILN_OPT19);
  KILN_ASSIGN_OR_RETURN(ProcessOutput out,
                        runSubprocess(args, std::chrono::minutes(2), {}, std::size_t{64} << 20));
  if (!out.status.success()) {
    const std::string& err = out.stderrText;
    return compileError("opt-19 " + out.status.describe() + ": " +
                        err.substr(err.size() > 300 ? err.size() - 300 : 0));
  }
  return std::move(out.stdoutText);
}

// LLVM's text of a module without the two lines that name the input file
// (kiln's canonical text is defined the same way: compilers/llvm_engine/ir_text.h).
std::string withoutInputName(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::size_t next = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + pos, next - pos);
    if (!line.starts_with("; ModuleID = ") && !line.starts_with("source_filename = ")) {
      out.append(line);
    }
    pos = next;
  }
  return out;
}

// What `opt-19 -S` prints for a bitcode file, without the input's name.
Result<std::string> optText(const fs::path& bitcode) {
  KILN_ASSIGN_OR_RETURN(std::string text, opt({"-S", bitcode.string(), "-o", "-"}));
  return withoutInputName(text);
}

// What LLVM prints for a bitcode file, read into a context of its own: what
// `opt-19 -S file.bc` prints (its reader and printer, in this process to
// spare a process per application), without the input's name.
Result<std::string> printedText(const fs::path& bitcode) {
  const std::string bytes = readFile(bitcode.string());
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bytes), bitcode.string()), context);
  if (!module) return compileError(llvm::toString(module.takeError()));
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, /*AAW=*/nullptr, /*ShouldPreserveUseListOrder=*/false);
  os.flush();
  return withoutInputName(text);
}

// `-passes=` text applied up to `kApplications` times, one opt-19 call each
// reading the previous output: the text after each application that ran,
// and why opt stopped early (a crash, an LLVM ERROR), if it did.
struct OptChain {
  std::vector<std::string> texts;
  Status stopped;
};

OptChain optChain(const std::string& passes, const fs::path& input, const fs::path& dir) {
  OptChain chain;
  fs::path current = input;
  for (int i = 0; i < kApplications && chain.stopped.ok(); ++i) {
    const fs::path next = dir / ("opt" + std::to_string(i) + ".bc");
    chain.stopped = opt({"-passes=" + passes, current.string(), "-o", next.string()}).status();
    if (!chain.stopped.ok()) break;
    Result<std::string> text = printedText(next);
    if (!text.ok()) {
      chain.stopped = text.status();
      break;
    }
    chain.texts.push_back(std::move(*text));
    current = next;
  }
  return chain;
}

// The first line where two texts differ, for a failure message.
std::string firstDifference(const std::string& kiln, const std::string& opt) {
  std::istringstream a(kiln), b(opt);
  std::string lineA, lineB;
  for (int n = 1;; ++n) {
    const bool moreA = static_cast<bool>(std::getline(a, lineA));
    const bool moreB = static_cast<bool>(std::getline(b, lineB));
    if (!moreA && !moreB) return "equal";
    if (!moreA || !moreB || lineA != lineB) {
      return "line " + std::to_string(n) + ": kiln '" + (moreA ? lineA : "<end>") + "', opt '" +
             (moreB ? lineB : "<end>") + "'";
    }
  }
}

struct ModuleCase {
  std::string label;  // e.g. "kiln-bench-v0/bfs", "csmith-v0/1"
  fs::path file;      // bitcode or IR text (.ll); empty for a generated module
  std::uint32_t seed = 0;
};

void PrintTo(const ModuleCase& c, std::ostream* os) { *os << c.label; }

// The module's file: generated ones (csmith-v0, llvm-stress-v0) are made
// here, in the test, so that listing the tests runs no generator.
Result<fs::path> moduleFile(const ModuleCase& c, const fs::path& dir) {
  if (!c.file.empty()) return c.file;
  const datasets::DatasetConfig config;
  const bool csmith = c.label.starts_with("csmith");
  KILN_ASSIGN_OR_RETURN(datasets::BenchmarkBytes bytes,
                        csmith ? datasets::generateCsmith(config, c.seed)
                               : datasets::generateLlvmStress(config, c.seed));
  const fs::path path = dir / (csmith ? "input.bc" : "input.ll");
  std::ofstream(path, std::ios::binary) << bytes.bytes;
  return path;
}

std::vector<ModuleCase> moduleCases() {
  const char* mode = std::getenv("KILN_OPT_EQUIVALENCE");
  const bool full = mode != nullptr && std::string_view(mode) == "full";
  std::vector<std::string> bench = {"bfs", "nqueens"};
  if (full) {
    bench.clear();
    for (const auto& entry : fs::directory_iterator(KILN_BENCH_BC_DIR)) {
      if (entry.path().extension() == ".bc") bench.push_back(entry.path().stem().string());
    }
    std::sort(bench.begin(), bench.end());
  }
  std::vector<ModuleCase> cases;
  for (const std::string& name : bench) {
    cases.push_back({"kiln-bench-v0/" + name, fs::path(KILN_BENCH_BC_DIR) / (name + ".bc")});
  }
  for (std::uint32_t seed = 1; seed <= (full ? 10u : 2u); ++seed) {
    cases.push_back({"csmith-v0/" + std::to_string(seed), {}, seed});
  }
  if (!full) return cases;
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    cases.push_back({"llvm-stress-v0/" + std::to_string(seed), {}, seed});
  }
  if (const char* corpus = std::getenv("KILN_OPT_EQUIVALENCE_CORPUS")) {
    for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
      if (entry.path().extension() != ".bc") continue;
      cases.push_back({fs::relative(entry.path(), corpus).string(), entry.path()});
    }
  }
  return cases;
}

// What opt-19 is given for an action: its name, which is the point, unless
// the table says why the action runs other text.
std::string optPassesFor(const PassInfo& pass) {
  if (pass.name == "instcombine") return "instcombine";
  return pass.note.empty() ? pass.name : pass.pipeline;
}

Result<std::unique_ptr<ModuleState>> kilnState(const fs::path& file, const std::string& label) {
  const std::string bytes = readFile(file.string());
  if (file.extension() == ".ll") return ModuleState::fromIrText(passTable(), bytes, label);
  return ModuleState::fromBitcode(passTable(), bytes, label);
}

class ActionsMatchOptTest : public ::testing::TestWithParam<ModuleCase> {};

TEST_P(ActionsMatchOptTest, EveryActionAppliedThreeTimesGivesOptsText) {
  const ModuleCase& c = GetParam();
  const ScratchDir input("input");
  const Result<fs::path> file = moduleFile(c, input.path());
  ASSERT_TRUE(file.ok()) << file.status().toString();
  ASSERT_TRUE(fs::exists(*file)) << *file;
  std::vector<std::string> mismatches;
  int compared = 0, refused = 0, optStopped = 0;
  std::string failedInBoth;  // actions on which LLVM fails in kiln and in opt alike
  for (std::size_t i = 0; i < passTable()->size(); ++i) {
    const PassInfo& pass = passTable()->at(i);
    if (pass.note.empty()) {
      EXPECT_EQ(pass.pipeline, pass.name) << "an action without a note runs its name";
    }
    auto state = kilnState(*file, c.label);
    ASSERT_TRUE(state.ok()) << state.status().toString();
    std::vector<std::string> kilnTexts;
    Status kilnError;
    for (int n = 0; n < kApplications && kilnError.ok(); ++n) {
      auto outcome = (*state)->applyPass(i);
      if (outcome.ok()) {
        kilnTexts.push_back(*(*state)->ir());
      } else {
        kilnError = outcome.status();
      }
    }
    if (kilnError.code() == ErrorCode::kInvalidArgument && pass.needsBranchTerminators &&
        kilnTexts.empty()) {
      ++refused;  // refused before it ran, the state unchanged: nothing to compare
      continue;
    }
    const ScratchDir dir(std::to_string(i));
    OptChain reference = optChain(optPassesFor(pass), *file, dir.path());
    if (!reference.stopped.ok() && pass.name == "instcombine") {
      ++optStopped;  // opt's fixpoint check stopped it: compare what kiln runs
      reference = optChain(pass.pipeline, *file, dir.path());
    }
    ++compared;
    const std::size_t ran = std::min(kilnTexts.size(), reference.texts.size());
    for (std::size_t n = 0; n < ran; ++n) {
      if (kilnTexts[n] == reference.texts[n]) continue;
      mismatches.push_back(pass.name + " differs after application " + std::to_string(n + 1) +
                           ", " + firstDifference(kilnTexts[n], reference.texts[n]));
      break;
    }
    if (kilnError.ok() && reference.stopped.ok()) continue;
    // LLVM itself failing (a crash, an LLVM ERROR) is opt's behaviour too when
    // opt fails at the same application: kiln ends the episode with a compile
    // error where opt dies. Anything else is a difference.
    if (kilnTexts.size() == reference.texts.size() &&
        kilnError.code() == ErrorCode::kCompileError && !reference.stopped.ok()) {
      failedInBoth += " " + pass.name;
      continue;
    }
    mismatches.push_back(pass.name + ": kiln after " + std::to_string(kilnTexts.size()) +
                         " applications: " + kilnError.toString() + "; opt after " +
                         std::to_string(reference.texts.size()) + ": " +
                         reference.stopped.toString().substr(0, 300));
  }
  std::string report;
  for (const std::string& m : mismatches) report += m + "\n";
  EXPECT_TRUE(mismatches.empty()) << mismatches.size() << " of " << compared
                                  << " actions differ from opt-19 on " << c.label << ":\n"
                                  << report;
  std::cout << c.label << ": " << compared << " actions x " << kApplications
            << " applications equal opt-19's text: " << compared - mismatches.size()
            << "; refused (state unchanged): " << refused
            << "; instcombine stopped by opt's fixpoint check: " << optStopped
            << "; LLVM failed in both, at the same application:"
            << (failedInBoth.empty() ? " none" : failedInBoth) << "\n";
}

INSTANTIATE_TEST_SUITE_P(Modules, ActionsMatchOptTest, ::testing::ValuesIn(moduleCases()),
                         [](const ::testing::TestParamInfo<ModuleCase>& info) {
                           std::string name = info.param.label;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// Random sequences: kiln's state after 12 steps is where one opt-19 call per
// step, each given the action's name, ends.
struct SequenceCase {
  std::string program;
  unsigned seed;
};

void PrintTo(const SequenceCase& c, std::ostream* os) { *os << c.program << "/seed" << c.seed; }

class OptSequenceTest : public ::testing::TestWithParam<SequenceCase> {};

TEST_P(OptSequenceTest, RandomSequenceMatchesOneOptCallPerStep) {
  const SequenceCase& c = GetParam();
  auto state = loadBenchmark(c.program);
  ASSERT_NE(state, nullptr);
  const ScratchDir dir(c.program + "-" + std::to_string(c.seed));
  std::mt19937 rng(c.seed);
  std::uniform_int_distribution<std::size_t> pick(0, passTable()->size() - 1);
  fs::path current = benchmarkPath(c.program);
  std::string trace;
  for (int step = 0; step < 12; ++step) {
    const PassInfo& pass = passTable()->at(pick(rng));
    if (pass.name == "instcombine") continue;  // opt may stop on its fixpoint check
    trace += pass.name + " ";
    auto outcome = state->applyPass(*passTable()->find(pass.name));
    ASSERT_TRUE(outcome.ok()) << trace << ": " << outcome.status().toString();
    const fs::path next = dir.path() / ("step" + std::to_string(step) + ".bc");
    ASSERT_TRUE(opt({"-passes=" + optPassesFor(pass), current.string(), "-o", next.string()}).ok())
        << trace;
    current = next;
  }
  auto text = optText(current);
  ASSERT_TRUE(text.ok()) << text.status().toString();
  EXPECT_EQ(sha1Hex(*text), *state->irSha1()) << "diverged after: " << trace;
}

std::vector<SequenceCase> sequenceCases() {
  std::vector<SequenceCase> out;
  for (const std::string& program : testing::benchmarkNames()) {
    for (unsigned seed = 1; seed <= 2; ++seed) out.push_back({program, seed});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sequences, OptSequenceTest, ::testing::ValuesIn(sequenceCases()),
                         [](const ::testing::TestParamInfo<SequenceCase>& info) {
                           return info.param.program + "_seed" + std::to_string(info.param.seed);
                         });

class BaselineEquivalenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BaselineEquivalenceTest, OzAndO3MatchOpt) {
  const ScratchDir dir("baseline-" + GetParam());
  for (const std::string level : {"Oz", "O3"}) {
    auto state = loadBenchmark(GetParam());
    ASSERT_NE(state, nullptr);
    const std::string pipeline = "default<" + level + ">";
    ASSERT_TRUE(state->applyPipeline(pipeline).ok());
    // Through a .bc file, like every kiln state (see ModuleState::reload).
    const fs::path bc = dir.path() / (level + ".bc");
    ASSERT_TRUE(opt({"-passes=" + pipeline, benchmarkPath(GetParam()), "-o", bc.string()}).ok());
    auto text = optText(bc);
    ASSERT_TRUE(text.ok()) << text.status().toString();
    EXPECT_EQ(sha1Hex(*text), *state->irSha1()) << pipeline;
  }
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, BaselineEquivalenceTest,
                         ::testing::Values("matrix", "calls", "strings", "stencil"));

}  // namespace
}  // namespace kiln::llvm_engine
