// What an llvm session's program observations run: a corpus module's own run
// spec (<module>.run.json beside it, its stdin from a file of the corpus),
// the errors of a spec that is wrong, and one build per state for every
// observation of it (the executable cache).
#include <gtest/gtest.h>

#include "programs/make/json_tree.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session::testing {
namespace {

// Prints its argument count, its first argument and the sum of the numbers
// on its stdin: what it was given shows in its output.
constexpr const char* kEchoProgram = R"(#include <stdio.h>
int main(int argc, char** argv) {
  long sum = 0, x;
  while (scanf("%ld", &x) == 1) sum += x;
  printf("argc=%d first=%s sum=%ld\n", argc, argc > 1 ? argv[1] : "-", sum);
  return argc > 3 ? 7 : 0;
}
)";

void write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

class ProgramRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto source = scratch_.path() / "echo.c";
    write(source, kEchoProgram);
    corpus_ = scratch_.path() / "corpus";
    std::filesystem::create_directories(corpus_ / "inputs");
    for (const char* name : {"echo", "broken", "escape", "plain"}) {
      ASSERT_TRUE(run("clang-19 -O0 -Xclang -disable-O0-optnone -c -emit-llvm " + source.string() +
                      " -o " + (corpus_ / (std::string(name) + ".bc")).string()));
    }
    write(corpus_ / "inputs" / "numbers.txt", "1 2 3 4\n");
    write(scratch_.path() / "outside.txt", "100\n");
    write(corpus_ / "echo.run.json",
          R"({"inputs": [{"args": ["a", "b"], "stdin_file": "inputs/numbers.txt"},
                         {"args": ["x", "y", "z"], "stdin": "5 6"}], "libraries": []})");
    write(corpus_ / "broken.run.json", R"({"inputs": [{"args": "not a list"}]})");
    write(corpus_ / "escape.run.json", R"({"inputs": [{"stdin_file": "../outside.txt"}]})");

    cluster_ = startCluster([&](LocalClusterOptions& options) {
      options.worker.settings.datasets = {{"mine", corpus_}};
    });
    ASSERT_NE(cluster_.client, nullptr);
  }

  std::unique_ptr<client::Session> start(const std::string& module) {
    auto session = cluster_.client->startSession(llvmOptions("benchmark://mine/" + module));
    EXPECT_TRUE(session.ok()) << session.status().toString();
    return session.ok() ? std::move(session).value() : nullptr;
  }

  static Result<Value> observe(client::Session& session, const std::string& space) {
    KILN_ASSIGN_OR_RETURN(client::StepResult result,
                          session.step({}, std::vector<std::string>{space}));
    return result.observations.at(0);
  }

  ScratchDir scratch_{"program-runs"};
  std::filesystem::path corpus_;
  Cluster cluster_;
};

TEST_F(ProgramRunsTest, ACorpusModuleRunsWithTheInputsBesideIt) {
  auto session = start("echo");
  ASSERT_NE(session, nullptr);
  auto validation = observe(*session, "Validation");
  ASSERT_TRUE(validation.ok()) << validation.status().toString();
  auto report = programs::parseJson(validation->as<std::string>(), "the report");
  ASSERT_TRUE(report.ok()) << validation->as<std::string>();
  // Both inputs of echo.run.json, the second exiting 7 as the reference does.
  EXPECT_NE(validation->as<std::string>().find(R"("valid": true, "inputs": 2)"), std::string::npos)
      << validation->as<std::string>();

  // The spec's first input is what Runtime times and IsRunnable runs; a
  // planted difference in what the program prints is caught on each input.
  auto runnable = observe(*session, "IsRunnable");
  ASSERT_TRUE(runnable.ok()) << runnable.status().toString();
  EXPECT_EQ(runnable->as<std::int64_t>(), 1);
  ASSERT_TRUE(session->setParameter("llvm.run_spec", R"({"inputs": [{"args": ["a"]}]})").ok());
  validation = observe(*session, "Validation");
  ASSERT_TRUE(validation.ok()) << validation.status().toString();
  EXPECT_NE(validation->as<std::string>().find(R"("inputs": 1)"), std::string::npos);
}

TEST_F(ProgramRunsTest, AWrongCorpusSpecIsNamedAndTheSessionServesOn) {
  auto broken = start("broken");
  ASSERT_NE(broken, nullptr);
  auto runtime = observe(*broken, "Runtime");
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(runtime.status().message().find("benchmark://mine/broken (its .run.json)"),
            std::string::npos)
      << runtime.status().toString();
  EXPECT_NE(runtime.status().message().find("\"args\" is not an array"), std::string::npos)
      << runtime.status().toString();
  // The session still steps and observes what needs no program run.
  auto count = observe(*broken, "IrInstructionCount");
  EXPECT_TRUE(count.ok()) << count.status().toString();

  // A stdin_file may not leave the corpus, and its message keeps the
  // operator's directory on the host.
  auto escape = start("escape");
  ASSERT_NE(escape, nullptr);
  auto runnable = observe(*escape, "IsRunnable");
  ASSERT_FALSE(runnable.ok());
  EXPECT_NE(runnable.status().message().find(
                "\"stdin_file\" \"../outside.txt\" cannot be read: it leads out of the corpus"),
            std::string::npos)
      << runnable.status().toString();
  EXPECT_EQ(runnable.status().message().find(scratch_.path().string()), std::string::npos)
      << runnable.status().toString();

  // A client's spec cannot name files at all.
  auto plain = start("plain");
  ASSERT_NE(plain, nullptr);
  auto refused = plain->setParameter("llvm.run_spec", R"({"inputs": [{"stdin_file": "x"}]})");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("only a corpus's own run spec"), std::string::npos)
      << refused.status().toString();
  // Without a spec of its own a module runs once without arguments.
  auto report = observe(*plain, "Validation");
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_NE(report->as<std::string>().find(R"("valid": true, "inputs": 1)"), std::string::npos)
      << report->as<std::string>();
}

TEST_F(ProgramRunsTest, OneStateIsBuiltOnceForAllItsObservations) {
  auto session = start("plain");
  ASSERT_NE(session, nullptr);
  auto first = observe(*session, "Buildtime");
  ASSERT_TRUE(first.ok()) << first.status().toString();
  for (const char* space : {"IsBuildable", "IsRunnable", "Runtime", "Validation"}) {
    ASSERT_TRUE(observe(*session, space).ok()) << space;
  }
  // The build the cache holds: the same measurement, to the nanosecond.
  auto again = observe(*session, "Buildtime");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->as<double>(), first->as<double>());
  // A pass that changes the IR is a new program, built (and timed) anew.
  auto mem2reg = session->step({Value(passIndex(*session, "mem2reg"))}, std::vector<std::string>{});
  ASSERT_TRUE(mem2reg.ok()) << mem2reg.status().toString();
  auto changed = observe(*session, "Buildtime");
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(changed->as<double>(), first->as<double>());
}

}  // namespace
}  // namespace kiln::llvm_session::testing
