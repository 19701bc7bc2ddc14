// A short soak of real kiln processes (`kiln bench soak` in about 40 s): 40
// sessions of llvm, noop and mlgo-inline churning while workers are
// SIGKILLed. Asserts facts only, never speed: no step lost, every ended
// session's state checked and right (noop sums, llvm fingerprints and
// mlgo-inline states against a replay), and nothing left behind (sessions,
// compilers, zombies, files, descriptors).
#include "bench/soak_bench.h"

#include <gtest/gtest.h>

namespace kiln::bench {
namespace {

TEST(Soak, ShortSoakLeavesNothingBehindAndLosesNoStep) {
  SoakOptions options;
  options.kiln = KILN_BINARY;
  options.seconds = 30;
  options.sessions = 40;
  options.sampleEvery = 5;
  options.killEvery = 4;
  options.seed = 7;
  SoakFigures figures;
  auto report = runSoakBench(options, &figures);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  report->print(false);  // the figures, for whoever reads the log
  // The run did what a soak is for: churn and kills.
  EXPECT_GT(figures.kills, 0u);
  EXPECT_GE(figures.started, options.sessions);
  EXPECT_GT(figures.stepsCompleted, 0u);
  // Every session started or forked was ended, each once.
  EXPECT_EQ(figures.requestsFailed, 0u);
  EXPECT_EQ(figures.ended, figures.started + figures.forked);
  EXPECT_EQ(figures.crashes, 0u);
  EXPECT_EQ(figures.workersDiedOnTheirOwn, 0u);
  EXPECT_EQ(figures.stepsLost, 0u);
  EXPECT_EQ(figures.restoreCompileErrors, 0u);
  EXPECT_EQ(figures.stepsAttempted, figures.stepsCompleted + figures.stepsLost +
                                        figures.compileErrors + figures.restoreCompileErrors);
  // Every session whose episode no compile error ended had its state checked.
  std::uint64_t checked = 0;
  for (const auto& [type, counts] : figures.states) checked += counts.checked;
  EXPECT_EQ(checked, figures.ended - figures.compileErrors - figures.restoreCompileErrors -
                         figures.forksRefused);
  EXPECT_EQ(figures.mismatched, 0u);
  EXPECT_EQ(figures.stateChecksFailed, 0u);
  // Nothing left behind.
  EXPECT_EQ(figures.liveSessions, 0u);
  EXPECT_EQ(figures.compilers, 0u);
  EXPECT_EQ(figures.zombies, 0u);
  EXPECT_EQ(figures.workingDirectoryEntries, 0u);
  EXPECT_EQ(figures.descriptorGrowth, 0u);
  EXPECT_TRUE(figures.passed());
}

TEST(Soak, BadMixIsAClearError) {
  SoakOptions options;
  options.kiln = KILN_BINARY;
  options.mix = "llvm:0";
  auto report = runSoakBench(options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("llvm:0"), std::string::npos)
      << report.status().toString();
}

}  // namespace
}  // namespace kiln::bench
