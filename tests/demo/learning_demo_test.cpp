// The main job's learning demo on real embedded clusters of each layout,
// with tiny budgets: it runs, every layout walks the same learning curve,
// and the report and figures are written.
#include "tools/demo/learning_demo.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln::demo {
namespace {

std::vector<LearnerSettings> tinyLearners() {
  auto learners = defaultLearners(
      {"benchmark://kiln-bench-v0/crc32", "benchmark://kiln-bench-v0/quicksort"}, true);
  for (auto& l : learners) {
    l.envs = 2;
    l.horizon = 3;
    l.rollout = 3;
    l.iterations = 2;
    l.ppo.hidden = 16;
    l.heldOut = {"benchmark://kiln-bench-v0/sieve"};
  }
  return learners;
}

class LearningDemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln-learning-demo-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string read(const std::string& name) {
    std::stringstream text;
    text << std::ifstream(dir_ / name).rdbuf();
    return text.str();
  }
  std::filesystem::path dir_;
};

TEST_F(LearningDemoTest, EveryLayoutWalksTheSameCurveAndIsCompared) {
  LearningDemoOptions options;
  options.slots = 2;
  options.experiments = tinyLearners();
  options.report = (dir_ / "report.html").string();
  options.json = (dir_ / "figures.json").string();
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  Status status = runLearningDemo(options, out);
  std::fclose(out);
  std::string printed(text, size);
  std::free(text);
  ASSERT_TRUE(status.ok()) << status.toString() << "\n" << printed;
  EXPECT_NE(printed.find("the layouts compared"), std::string::npos) << printed;
  EXPECT_NE(printed.find("every layout walked the same learning curve"), std::string::npos)
      << printed;
  const std::string json = read("figures.json");
  for (const char* layout : {"nested", "dedicated", "shared"}) {
    EXPECT_NE(json.find(fmt::format("\"layout\": \"{}\"", layout)), std::string::npos) << json;
  }
  EXPECT_NE(json.find("\"same_curves\": true"), std::string::npos) << json;
  // Each host a machine with its budget (a quota, or whole CPUs where the
  // machine has no cgroup quota), the learners outside it.
  EXPECT_NE(printed.find("machines: each worker host its own CPU budget"), std::string::npos)
      << printed;
  EXPECT_EQ(json.find("\"host_budget\": \"none\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"ideal_collection_gain\": "), std::string::npos) << json;
  const std::string html = read("report.html");
  EXPECT_NE(html.find("Learning curves"), std::string::npos);
  // The utilization of every layout over time, not the nested one alone.
  const std::size_t timelines = html.find("Utilization of each layout over time");
  ASSERT_NE(timelines, std::string::npos);
  for (const char* layout : {"nested", "dedicated", "shared"}) {
    EXPECT_NE(html.find(fmt::format("<p>{} (", layout), timelines), std::string::npos) << layout;
  }
  // The greedy table: the trained-on benchmarks and the held-out one, each
  // best state validated (kiln-bench programs run on their inputs).
  EXPECT_NE(html.find("benchmark://kiln-bench-v0/quicksort"), std::string::npos);
  EXPECT_NE(html.find("benchmark://kiln-bench-v0/sieve"), std::string::npos);
  EXPECT_NE(html.find("held-out"), std::string::npos);
  EXPECT_EQ(html.find("INVALID"), std::string::npos);
  std::size_t bestCells = 0;
  for (std::size_t at = html.find(" after "); at != std::string::npos;
       at = html.find(" after ", at + 1)) {
    const std::string cell = html.substr(at, html.find('<', at) - at);
    if (cell.size() < 8 || !std::isdigit(static_cast<unsigned char>(cell[7]))) continue;  // header
    EXPECT_TRUE(cell.ends_with(", valid")) << cell;
    ++bestCells;
  }
  EXPECT_EQ(bestCells, 2u * 3u);  // two experiments, two trained-on and one held-out benchmark
}

TEST_F(LearningDemoTest, WrongSettingsAreRefusedBeforeAnyClusterStarts) {
  LearningDemoOptions options;
  options.experiments = tinyLearners();
  options.experiments[1].envs = 0;
  options.report = (dir_ / "report.html").string();
  std::FILE* out = std::fopen("/dev/null", "w");
  Status status = runLearningDemo(options, out);
  std::fclose(out);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("envs"), std::string::npos) << status.message();
  options.experiments = tinyLearners();
  options.experiments[0].benchmarks.clear();
  out = std::fopen("/dev/null", "w");
  status = runLearningDemo(options, out);
  std::fclose(out);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
}

TEST_F(LearningDemoTest, AnUnknownBenchmarkFailsWithItsName) {
  LearningDemoOptions options;
  options.slots = 2;
  options.experiments = tinyLearners();
  options.experiments[0].benchmarks = {"benchmark://kiln-bench-v0/no-such-program"};
  options.layouts = {Layout::kNested};
  options.report = (dir_ / "report.html").string();
  options.budget = "none";  // hosts in this process, sharing every core
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&text, &size);
  Status status = runLearningDemo(options, out);
  std::fclose(out);
  std::string printed(text, size);
  std::free(text);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no-such-program"), std::string::npos) << status.message();
  EXPECT_NE(printed.find("machines: none (--budget none)"), std::string::npos) << printed;
}

}  // namespace
}  // namespace kiln::demo
