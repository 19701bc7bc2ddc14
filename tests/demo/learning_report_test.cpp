#include "tools/demo/learning_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln::demo {
namespace {

IterationRecord iteration(double end, double meanReturn, std::uint64_t steps = 100) {
  IterationRecord r;
  r.endSeconds = end;
  r.collectSeconds = 0.6;
  r.updateSeconds = 0.4;
  r.updateCpuSeconds = 0.4;
  r.steps = steps;
  r.episodes = 10;
  r.meanReturn = meanReturn;
  return r;
}

// Two experiments of three iterations; experiment 1 starts `offset` later.
LayoutResult layout(Layout l, double scale, double offset, double seconds) {
  LayoutResult r;
  r.layout = l;
  r.slots = 2;
  r.seconds = seconds;
  r.cpuSeconds = seconds;  // half of 2 cores
  r.starts = {0, offset};
  for (int e = 0; e < 2; ++e) {
    const double start = e == 0 ? 0 : offset;
    r.records.push_back({iteration(start + 1 * scale, 0.1), iteration(start + 2 * scale, 0.5),
                         iteration(start + 3 * scale, 0.9)});
  }
  Sample s;
  s.totalBusy = 1;
  r.samples = {s, s};
  return r;
}

// Experiments `first` and "b" over `layouts`.
LearningRecord recordOf(const std::string& first, std::vector<LayoutResult> layouts) {
  LearningRecord record;
  record.experiments.resize(2);
  record.experiments[0].name = first;
  record.experiments[1].name = "b";
  record.layouts = std::move(layouts);
  return record;
}

TEST(LearningReportTest, SmoothedReturnsAverageTheLastIterationsWithEpisodes) {
  std::vector<IterationRecord> records{iteration(1, 0.3), iteration(2, 0.6), iteration(3, 0.9)};
  records[1].episodes = 0;  // an iteration where no episode ended does not count
  auto smoothed = smoothedReturns(records, 2);
  ASSERT_EQ(smoothed.size(), 3u);
  EXPECT_DOUBLE_EQ(smoothed[0], 0.3);
  EXPECT_DOUBLE_EQ(smoothed[1], 0.3);
  EXPECT_DOUBLE_EQ(smoothed[2], 0.9);
}

TEST(LearningReportTest, LayoutsAreJudgedAgainstTheDedicatedHalvesAndTheSharedPool) {
  LearningRecord record = recordOf(
      "a", {layout(Layout::kNested, 1.0, 0.5, 4.0), layout(Layout::kDedicated, 2.0, 0.5, 8.0),
            layout(Layout::kShared, 1.5, 0.5, 5.0)});
  Comparison c = compare(record, 2);
  ASSERT_EQ(c.layouts.size(), 3u);
  EXPECT_TRUE(c.sameCurves);
  const LayoutFigures& nested = c.layouts[0];
  EXPECT_EQ(nested.layout, "nested");
  EXPECT_DOUBLE_EQ(nested.stepsPerSecond, 600 / 4.0);
  EXPECT_DOUBLE_EQ(nested.vsDedicated, 2.0);
  EXPECT_DOUBLE_EQ(nested.vsShared, 5.0 / 4.0);
  EXPECT_DOUBLE_EQ(nested.cpuShare, 0.5);
  EXPECT_DOUBLE_EQ(nested.slotUse, 0.5);
  EXPECT_DOUBLE_EQ(nested.updateCpuShare, 6 * 0.4 / 8.0);
  // Each experiment's wall time runs from its own start.
  EXPECT_DOUBLE_EQ(nested.experiments[1].wallSeconds, 3.0);
  EXPECT_DOUBLE_EQ(nested.experiments[1].vsDedicated, 2.0);
  EXPECT_DOUBLE_EQ(nested.fairness, 1.0);
  // The reward target is 60% of the nested curve's best smoothed return
  // (0.5 = mean of 0.1, 0.5, 0.9): 0.3, first reached at the second
  // iteration (smoothed: 0.1, 0.3, 0.5).
  EXPECT_NEAR(c.rewardTargets[0], 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(nested.experiments[0].rewardSeconds, 2.0);
  EXPECT_DOUBLE_EQ(c.layouts[1].experiments[0].rewardSeconds, 4.0);
  // The dedicated learners updated 3 x 0.4 s of their 6 s each: a lull of
  // 0.2 (U / C = 1/4), so sharing could collect at most 1 / (1 - 1/4) =
  // 1.33x faster, and gain 1 / (0.2 + 0.8 x 0.75) = 1.25x in wall steps/s.
  EXPECT_NEAR(c.lullFraction, 0.2, 1e-12);
  EXPECT_NEAR(c.idealCollectionGain, 4.0 / 3, 1e-12);
  EXPECT_NEAR(c.idealWallGain, 1.25, 1e-12);
  // Collection: 300 steps in 1.8 s per experiment, nested and dedicated
  // alike (the records' collect times are the same in every layout).
  EXPECT_DOUBLE_EQ(nested.collectStepsPerSecond, 2 * 300 / 1.8);
  EXPECT_DOUBLE_EQ(nested.collectVsDedicated, 1.0);
}

// The limits of sharing K machines between experiments that each train a
// fraction L of the time (common/types/cluster_layout.h).
TEST(LearningReportTest, TheIdealGainsFollowFromTheLullAndTheExperiments) {
  // Collection: all K machines while the others train, as long as the
  // experiments' collections fit the capacity.
  EXPECT_DOUBLE_EQ(idealCollectionGain(0.5, 2), 2.0);
  EXPECT_DOUBLE_EQ(idealCollectionGain(0.75, 8), 8.0);
  EXPECT_DOUBLE_EQ(idealCollectionGain(0.25, 4), 1.5);  // (1 - L) / (1 - 2L)
  EXPECT_DOUBLE_EQ(idealCollectionGain(0.25, 1), 1.0);
  EXPECT_DOUBLE_EQ(idealCollectionGain(0.0, 4), 1.0);  // no lull: nothing to lend
  // Wall time: every update still takes U, so two experiments at L = 0.5
  // gain at most 4/3, never the 2x of the machines' utilization.
  EXPECT_DOUBLE_EQ(idealWallGain(0.5, 2), 4.0 / 3);
  EXPECT_DOUBLE_EQ(idealWallGain(0.5, 4), 1.6);
  EXPECT_DOUBLE_EQ(idealWallGain(0.25, 2), 4.0 / 3);  // = 1 / (1 - L): capacity-bound
  EXPECT_DOUBLE_EQ(idealWallGain(0.0, 4), 1.0);
  for (double lull : {0.1, 0.25, 0.5, 0.75, 0.9}) {
    for (std::size_t k : {1u, 2u, 4u, 8u}) {
      const double utilization = std::min<double>(k, 1 / (1 - lull));
      EXPECT_LE(idealWallGain(lull, k), utilization + 1e-12) << lull << " " << k;
      EXPECT_LE(idealWallGain(lull, k), idealCollectionGain(lull, k) + 1e-12) << lull << " " << k;
    }
  }
}

TEST(LearningReportTest, UnfairSharingAndDifferentCurvesAreReported) {
  LearningRecord record = recordOf(
      "a", {layout(Layout::kNested, 1.0, 0, 4.0), layout(Layout::kDedicated, 1.0, 0, 4.0)});
  // In the nested layout experiment 1 took twice as long.
  for (auto& i : record.layouts[0].records[1]) i.endSeconds *= 2;
  record.layouts[1].records[0][2].meanReturn = 0.8;
  Comparison c = compare(record, 2);
  EXPECT_FALSE(c.sameCurves);
  EXPECT_DOUBLE_EQ(c.layouts[0].experiments[1].vsDedicated, 0.5);
  EXPECT_DOUBLE_EQ(c.layouts[0].fairness, 0.5);
  EXPECT_DOUBLE_EQ(c.layouts[0].vsShared, 0);  // no shared layout ran
}

TEST(LearningReportTest, TheReportAndTheJsonCarryEveryLayout) {
  LearningRecord record = recordOf(
      "a<b", {layout(Layout::kNested, 1.0, 0.5, 4.0), layout(Layout::kDedicated, 2.0, 0.5, 8.0)});
  // Per experiment: a trained-on benchmark whose best state (after 1 of 2
  // passes) beats its final one, and a held-out one.
  const eval::ValidationVerdict valid{eval::Validity::kValid, 1, ""};
  const eval::ValidationVerdict invalid{eval::Validity::kInvalid, 1, "output: differs"};
  record.layouts[0].greedy = {
      {{"benchmark://x/y", false, {"mem2reg", "gvn"}, 1, 100, 70, 60, 50, valid},
       {"benchmark://x/z", true, {"sroa"}, 1, 100, 40, 40, 50, invalid}},
      {{"benchmark://x/y", false, {}, 0, 100, 100, 100, 50, valid},
       {"benchmark://x/z", true, {}, 0, 100, 100, 100, 50, valid}}};
  Comparison c = compare(record, 2);
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln-learning-report-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(writeLearningReport(record, c, (dir / "r.html").string()).ok());
  ASSERT_TRUE(writeLearningJson(record, c, (dir / "r.json").string()).ok());
  std::stringstream html, json;
  html << std::ifstream(dir / "r.html").rdbuf();
  json << std::ifstream(dir / "r.json").rdbuf();
  EXPECT_NE(html.str().find("a&lt;b"), std::string::npos);  // escaped
  // The best state (40 of -Oz's drop of 50) beside the final one (30).
  EXPECT_NE(html.str().find("60 (80%) after 1, valid"), std::string::npos) << html.str();
  EXPECT_NE(html.str().find("70 (60%), unvalidated"), std::string::npos);
  EXPECT_NE(html.str().find("= best"), std::string::npos);
  // An invalid state counts as unoptimized, however small.
  EXPECT_NE(html.str().find("INVALID, counted 100 (0%)"), std::string::npos);
  EXPECT_EQ(html.str().find("40 (120%)"), std::string::npos);
  EXPECT_NE(html.str().find("trained on"), std::string::npos);
  EXPECT_NE(html.str().find("held-out"), std::string::npos);
  EXPECT_NE(html.str().find("<svg"), std::string::npos);
  EXPECT_NE(json.str().find("\"layout\": \"dedicated\""), std::string::npos);
  EXPECT_NE(json.str().find("\"ideal_wall_gain\": 1.2500"), std::string::npos) << json.str();
  // The target is printed with the limits that explain it.
  EXPECT_NE(html.str().find("can gain at most 1.33x in collection steps/s and 1.25x in env "
                            "steps per wall second"),
            std::string::npos);
  EXPECT_NE(json.str().find("\"mean_returns\": [0.10000, 0.50000, 0.90000]"), std::string::npos);
  EXPECT_FALSE(writeLearningJson(record, c, (dir / "missing" / "r.json").string()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::demo
