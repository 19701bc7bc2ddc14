// kiln against real opt-19. kiln runs each action with its own pass manager,
// which is what one `opt-19 -passes=<pipeline>` call per pass does (the IR is
// handed from call to call as bitcode with use-list order preserved). A single
// `opt -passes=a,b` call is NOT the same in general: opt groups adjacent
// function passes into one function pipeline (a then b per function) and
// shares cached analyses between them; kiln's pipelines are explicit module
// level adaptors ("function(gvn<>)"), so only the per-call form is asserted.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "llvmenv/ir_text.h"
#include "tests/llvmenv/test_support.h"

namespace kiln::llvmenv {
namespace {

namespace fs = std::filesystem;
using testing::benchmarkPath;
using testing::loadBenchmark;
using testing::passTable;
using testing::readFile;

bool run(const std::string& command) {
  const int status = std::system((command + " 2>/dev/null").c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string opt() { return KILN_OPT19; }

// opt's textual output reduced the way kiln's canonical text is defined.
std::string canonicalOptText(const fs::path& ll) {
  std::string text = readFile(ll.string());
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    std::size_t next = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + pos, next - pos);
    if (!line.starts_with("; ModuleID = ") && !line.starts_with("source_filename = ")) {
      out.append(line);
    }
    pos = next;
  }
  return out;
}

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(fs::temp_directory_path() /
              ("kiln-llvmenv-" + std::to_string(::getpid()) + "-" + tag)) {
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

struct Case {
  std::string program;
  unsigned seed;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.program << "/seed" << c.seed; }

class OptEquivalenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(OptEquivalenceTest, RandomSequenceMatchesOneOptCallPerPass) {
  const Case& c = GetParam();
  auto state = loadBenchmark(c.program);
  ASSERT_NE(state, nullptr);
  ScratchDir dir(c.program + "-" + std::to_string(c.seed));

  std::mt19937 rng(c.seed);
  std::uniform_int_distribution<std::size_t> pick(0, passTable()->size() - 1);
  fs::path current = benchmarkPath(c.program);
  std::string trace;
  for (int step = 0; step < 12; ++step) {
    const PassInfo& pass = passTable()->at(pick(rng));
    trace += pass.name + " ";
    auto outcome = state->applyPass(*passTable()->find(pass.name));
    ASSERT_TRUE(outcome.ok()) << trace << ": " << outcome.status().toString();

    const fs::path next = dir.path() / ("step" + std::to_string(step) + ".bc");
    ASSERT_TRUE(run(opt() + " -preserve-bc-uselistorder -passes='" + pass.pipeline + "' " +
                    current.string() + " -o " + next.string()))
        << "opt failed on " << pass.pipeline;
    current = next;

    const fs::path ll = dir.path() / ("step" + std::to_string(step) + ".ll");
    ASSERT_TRUE(run(opt() + " -S " + current.string() + " -o " + ll.string()));
    const std::string optText = canonicalOptText(ll);
    ASSERT_EQ(sha1Hex(optText), *state->irSha1()) << "diverged after: " << trace;

    auto reparsed = ModuleState::fromIrText(passTable(), readFile(ll.string()), "opt.ll");
    ASSERT_TRUE(reparsed.ok()) << reparsed.status().toString();
    EXPECT_EQ(*(*reparsed)->instructionCount(), *state->instructionCount());
  }
}

// Three seeds per program by default; KILN_LLVMENV_SEEDS=N runs seeds 1..N
// (a longer soak against opt).
std::vector<Case> cases() {
  unsigned seeds = 3;
  if (const char* env = std::getenv("KILN_LLVMENV_SEEDS")) seeds = std::max(1, std::atoi(env));
  std::vector<Case> out;
  for (const std::string& program : testing::benchmarkNames()) {
    for (unsigned seed = 1; seed <= seeds; ++seed) out.push_back({program, seed});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sequences, OptEquivalenceTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.program + "_seed" + std::to_string(info.param.seed);
                         });

class BaselineEquivalenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BaselineEquivalenceTest, OzAndO3MatchOpt) {
  ScratchDir dir("baseline-" + GetParam());
  for (const std::string level : {"Oz", "O3"}) {
    auto state = loadBenchmark(GetParam());
    ASSERT_NE(state, nullptr);
    const std::string pipeline = "default<" + level + ">";
    ASSERT_TRUE(state->applyPipeline(pipeline).ok());
    // Through a .bc file, like every kiln state (see ModuleState::reload).
    const fs::path bc = dir.path() / (level + ".bc");
    const fs::path ll = dir.path() / (level + ".ll");
    ASSERT_TRUE(run(opt() + " -passes='" + pipeline + "' " + benchmarkPath(GetParam()) + " -o " +
                    bc.string()));
    ASSERT_TRUE(run(opt() + " -S " + bc.string() + " -o " + ll.string()));
    EXPECT_EQ(sha1Hex(canonicalOptText(ll)), *state->irSha1()) << pipeline;
    auto reparsed = ModuleState::fromIrText(passTable(), readFile(ll.string()), "opt.ll");
    ASSERT_TRUE(reparsed.ok());
    EXPECT_EQ(*(*reparsed)->instructionCount(), *state->instructionCount()) << pipeline;
  }
}

INSTANTIATE_TEST_SUITE_P(Benchmarks, BaselineEquivalenceTest,
                         ::testing::Values("matrix", "calls", "strings", "stencil"));

}  // namespace
}  // namespace kiln::llvmenv
