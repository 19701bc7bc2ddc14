// `kiln eval`'s mechanism on an embedded single-node cluster with real llvm
// sessions: small step budgets, two benchmarks in parallel.
#include "tools/eval/harness.h"

#include <gtest/gtest.h>

#include <kiln/client/client.h>
#include "tests/support/scratch_dir.h"
#include "tools/eval/session_scorer.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::eval {
namespace {

constexpr const char* kCrc32 = "benchmark://kiln-bench-v0/crc32";
constexpr const char* kQuicksort = "benchmark://kiln-bench-v0/quicksort";

EvalOptions smallRun(AgentKind agent) {
  EvalOptions o;
  o.slots = 2;
  o.benchmarks = {kCrc32, kQuicksort};
  o.agent = agent;
  o.seed = 11;
  o.budget.steps = 120;
  return o;
}

TEST(EvalHarness, EveryAgentReportsBothBenchmarksAgainstOz) {
  for (AgentKind agent : {AgentKind::kRandom, AgentKind::kGreedy, AgentKind::kBeam}) {
    std::size_t calls = 0;
    auto report =
        runEval(smallRun(agent), [&](std::size_t done, std::size_t total, const std::string&) {
          ++calls;
          EXPECT_EQ(done, calls);
          EXPECT_EQ(total, 2u);
        });
    ASSERT_TRUE(report.ok()) << report.status().toString();
    EXPECT_EQ(calls, 2u);
    EXPECT_EQ(report->parallel, 2u);
    ASSERT_EQ(report->results.size(), 2u) << formatTable(*report);
    EXPECT_TRUE(report->failures.empty());
    for (const BenchmarkResult& r : report->results) {
      EXPECT_GT(r.instCount, 0);
      EXPECT_GT(r.instCountOz, 0);
      EXPECT_GT(r.textSize, 0);
      EXPECT_LE(r.instCount, r.instCountInitial);
      EXPECT_EQ(r.passes.size(), r.passNames.size());
      EXPECT_EQ(r.irSha1.size(), 40u);
      EXPECT_GE(r.steps, 1u);
      // A budget may be overrun by the one query open when it ran out.
      EXPECT_LE(r.steps, 120u + 24u);
      // kiln-bench programs run on their inputs: each state was run
      // against -O0 on every one.
      EXPECT_TRUE(r.failure.ok()) << r.failure.toString();
      EXPECT_EQ(r.validation.validity, Validity::kValid) << r.validation.detail;
      EXPECT_GT(r.validation.inputs, 0u);
      EXPECT_GT(r.textSizeO0, 0);
    }
    EXPECT_EQ(report->count(Validity::kValid), 2u);
    EXPECT_GT(report->geomeanInstCountVsOz(), 0.0);
  }
}

TEST(EvalHarness, ASeedAndAStepBudgetFixTheResult) {
  auto first = runEval(smallRun(AgentKind::kGreedy), nullptr);
  auto second = runEval(smallRun(AgentKind::kGreedy), nullptr);
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->results.size(), second->results.size());
  for (std::size_t i = 0; i < first->results.size(); ++i) {
    EXPECT_EQ(first->results[i].passes, second->results[i].passes);
    EXPECT_EQ(first->results[i].irSha1, second->results[i].irSha1);
  }
}

TEST(EvalHarness, ABadBenchmarkIsAFailureOfItsOwnAndBadRunsAreRefused) {
  EvalOptions o = smallRun(AgentKind::kRandom);
  o.benchmarks = {kCrc32, "benchmark://kiln-bench-v0/no-such-program"};
  auto report = runEval(o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->results.size(), 1u);
  ASSERT_EQ(report->failures.size(), 1u);
  EXPECT_EQ(report->failures[0].benchmark, "benchmark://kiln-bench-v0/no-such-program");

  EvalOptions noBudget = smallRun(AgentKind::kGreedy);
  noBudget.budget = {};
  EXPECT_EQ(runEval(noBudget, nullptr).status().code(), ErrorCode::kInvalidArgument);

  EvalOptions generator = smallRun(AgentKind::kGreedy);
  generator.benchmarks.clear();
  generator.datasets = {"generator://csmith-v0"};
  auto refused = runEval(generator, nullptr);
  ASSERT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--generator-seeds"), std::string::npos);

  EvalOptions notADataset = smallRun(AgentKind::kGreedy);
  notADataset.datasets = {kCrc32};
  EXPECT_EQ(runEval(notADataset, nullptr).status().code(), ErrorCode::kInvalidArgument);
}

TEST(EvalHarness, ADatasetRunsItsBenchmarksUpToTheLimit) {
  EvalOptions o = smallRun(AgentKind::kGreedy);
  o.benchmarks.clear();
  o.datasets = {"benchmark://kiln-bench-v0"};
  o.perDataset = 3;
  o.budget.steps = 20;
  o.validate = false;
  auto report = runEval(o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->results.size() + report->failures.size(), 3u);
  EXPECT_FALSE(report->validated);
  for (const BenchmarkResult& r : report->results) {
    EXPECT_EQ(r.validation.validity, Validity::kUnvalidated) << r.benchmark;
  }
  EXPECT_NE(formatTable(*report).find("UNVALIDATED (--no-validate)"), std::string::npos);
}

// A function whose stores to a local mem2reg and instcombine fold away.
constexpr const char* kFoldableModule = R"(define i32 @twice(i32 %x) {
  %slot = alloca i32
  store i32 %x, ptr %slot
  %a = load i32, ptr %slot
  %b = add i32 %a, %a
  ret i32 %b
}
)";

TEST(EvalHarness, AUsersCorpusDirectoryIsServedByTheEmbeddedClusterAndRun) {
  testsupport::ScratchDir corpus("kiln-eval-corpus");
  testsupport::writeFile(corpus.path() / "one.ll", kFoldableModule);
  testsupport::writeFile(corpus.path() / "sub" / "two.ll", kFoldableModule);
  EvalOptions o = smallRun(AgentKind::kGreedy);
  o.benchmarks.clear();
  o.servedDatasets = {OperatorDataset{"mine", corpus.path()}};
  o.datasets = {"benchmark://mine"};
  o.budget.steps = 40;
  auto report = runEval(o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  ASSERT_EQ(report->results.size(), 2u) << formatTable(*report);
  EXPECT_EQ(report->results[0].benchmark, "benchmark://mine/one");
  EXPECT_EQ(report->results[1].benchmark, "benchmark://mine/sub/two");
  for (const BenchmarkResult& r : report->results) {
    EXPECT_LT(r.instCount, r.instCountInitial);
    // A module without main cannot be run against -O0: the verifier only.
    EXPECT_EQ(r.validation.validity, Validity::kVerifiedOnly) << r.validation.detail;
    EXPECT_FALSE(r.validation.detail.empty());
  }

  // A cluster's workers read what their operator gave them, not a client's
  // directory: refused before anything runs.
  o.coordinator = "tcp://127.0.0.1:9";
  auto refused = runEval(o, nullptr);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("embedded cluster only"), std::string::npos);
}

TEST(EvalHarness, AClusterOfNestingHostsOnlyGetsAnExperimentForTheRun) {
  LocalClusterOptions local;
  local.workers = 0;
  local.nestingHosts = 1;
  local.worker.slots = 2;
  auto cluster = LocalCluster::start(local);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(std::chrono::seconds(10)).ok());
  EvalOptions o = smallRun(AgentKind::kGreedy);
  o.coordinator = (*cluster)->coordinatorEndpoint();
  o.budget.steps = 30;
  auto report = runEval(o, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->results.size(), 2u) << formatTable(*report);
  EXPECT_EQ(report->parallel, 2u);
}

TEST(SessionScorer, ReusedPrefixesScoreAsAFreshSessionDoes) {
  LocalClusterOptions local;
  local.workers = 1;
  auto cluster = LocalCluster::start(local);
  ASSERT_TRUE(cluster.ok());
  ASSERT_TRUE((*cluster)->waitUntilReady(std::chrono::seconds(10)).ok());
  client::ClientOptions options;
  options.coordinator = (*cluster)->coordinatorEndpoint();
  auto client = client::Client::connect(options);
  ASSERT_TRUE(client.ok());
  std::atomic<bool> cancelled{false};
  auto cached = SessionScorer::start(**client, kCrc32, ScoreBudget{1000, {}}, cancelled, true, 4);
  ASSERT_TRUE(cached.ok()) << cached.status().toString();
  PassSequence prefix{1, 2, 3};
  ASSERT_TRUE((*cached)->score(prefix).ok());
  EXPECT_EQ((*cached)->stepsUsed(), 3u);
  PassSequence longer{1, 2, 3, 4, 5};
  auto reused = (*cached)->score(longer);
  ASSERT_TRUE(reused.ok() && reused->has_value());
  EXPECT_EQ((*cached)->stepsUsed(), 5u);  // only passes 4 and 5 were applied
  auto again = (*cached)->score(longer);
  EXPECT_EQ((*cached)->stepsUsed(), 5u);  // already open: nothing applied

  auto fresh = SessionScorer::start(**client, kCrc32, ScoreBudget{1000, {}}, cancelled, true, 1);
  ASSERT_TRUE(fresh.ok());
  auto scratch = (*fresh)->score(longer);
  ASSERT_TRUE(scratch.ok() && scratch->has_value());
  EXPECT_EQ((*scratch)->cost, (*reused)->cost);
  EXPECT_EQ((*scratch)->fingerprint, (*reused)->fingerprint);
  EXPECT_EQ((*again)->fingerprint, (*reused)->fingerprint);

  cancelled = true;
  EXPECT_TRUE((*fresh)->exhausted());
}

}  // namespace
}  // namespace kiln::eval
