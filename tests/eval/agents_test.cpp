// The search agents against a made-up problem (fake_scorer.h): what each
// finds, that a seed fixes the result, that budgets and broken modules are
// respected, and that machinery failures come back as errors.
#include "tools/eval/agents.h"

#include <gtest/gtest.h>

#include "fake_scorer.h"

namespace kiln::eval {
namespace {

constexpr AgentKind kAllAgents[] = {AgentKind::kRandom, AgentKind::kGreedy, AgentKind::kBeam};

// Re-scores a sequence from scratch, to check an agent's claimed cost.
std::int64_t costOf(const PassSequence& passes) {
  FakeScorer scorer(1'000'000);
  auto scored = scorer.score(passes);
  EXPECT_TRUE(scored.ok() && scored->has_value());
  return (*scored)->cost;
}

TEST(Agents, GreedyStopsAtThePlateauThatBeamCrosses) {
  FakeScorer greedyScorer(100'000);
  auto greedy = runAgent(AgentKind::kGreedy, greedyScorer, {}, 7);
  ASSERT_TRUE(greedy.ok()) << greedy.status().toString();
  EXPECT_EQ(greedy->cost, 70);
  EXPECT_EQ(greedy->best, (PassSequence{1, 1, 1}));
  // It converged well inside its budget: 4 rounds of 8 candidates.
  EXPECT_EQ(greedy->queries, 32u);

  FakeScorer beamScorer(100'000);
  auto beam = runAgent(AgentKind::kBeam, beamScorer, {}, 7);
  ASSERT_TRUE(beam.ok()) << beam.status().toString();
  EXPECT_EQ(beam->cost, 10);
  EXPECT_EQ(costOf(beam->best), 10);
  EXPECT_EQ(beam->best.size(), 6u);  // 3, 2, 2, 1, 1, 1 in some order
}

TEST(Agents, RandomSearchKeepsTheBestItSawWithinItsBudget) {
  FakeScorer scorer(24 * 50);
  AgentOptions options;
  options.episodeLength = 24;
  auto random = runAgent(AgentKind::kRandom, scorer, options, 3);
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->queries, 50u);
  EXPECT_EQ(scorer.steps(), 24u * 50u);
  EXPECT_LT(random->cost, 100);
  EXPECT_EQ(costOf(random->best), random->cost);
}

TEST(Agents, TheSameSeedGivesTheSameResultAndAnotherSeedMayNot) {
  for (AgentKind kind : kAllAgents) {
    FakeScorer a(600), b(600);
    auto first = runAgent(kind, a, {}, 42);
    auto second = runAgent(kind, b, {}, 42);
    ASSERT_TRUE(first.ok() && second.ok()) << agentName(kind);
    EXPECT_EQ(first->best, second->best) << agentName(kind);
    EXPECT_EQ(first->queries, second->queries) << agentName(kind);
  }
  // Random search over passes 0-4 (none breaks the module): two seeds draw
  // different first sequences.
  FakeScorer a(24, 5), b(24, 5);
  AgentOptions one;
  one.episodeLength = 24;
  auto x = runAgent(AgentKind::kRandom, a, one, 1);
  auto y = runAgent(AgentKind::kRandom, b, one, 2);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_NE(x->best, y->best);
}

TEST(Agents, EveryAgentStopsWhenTheBudgetIsSpent) {
  for (AgentKind kind : kAllAgents) {
    FakeScorer scorer(5);
    auto outcome = runAgent(kind, scorer, {}, 1);
    ASSERT_TRUE(outcome.ok()) << agentName(kind);
    // One query may overrun the budget (it was open when asked), no more.
    EXPECT_LE(scorer.steps(), 5u + 24u) << agentName(kind);
    EXPECT_TRUE(scorer.exhausted()) << agentName(kind);
  }
}

TEST(Agents, BrokenModulesAreSkippedNotChosen) {
  for (AgentKind kind : kAllAgents) {
    FakeScorer scorer(3000);
    auto outcome = runAgent(kind, scorer, {}, 9);
    ASSERT_TRUE(outcome.ok()) << agentName(kind);
    EXPECT_EQ(std::count(outcome->best.begin(), outcome->best.end(), 5), 0) << agentName(kind);
  }
}

TEST(Agents, MachineryFailuresAndBadOptionsAreErrors) {
  for (AgentKind kind : kAllAgents) {
    FakeScorer scorer(100);
    scorer.failWith(disconnected("worker lost"));
    auto outcome = runAgent(kind, scorer, {}, 1);
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.status().code(), ErrorCode::kDisconnected);
  }
  FakeScorer none(100, 0);
  EXPECT_EQ(runAgent(AgentKind::kGreedy, none, {}, 1).status().code(), ErrorCode::kInvalidArgument);
  FakeScorer scorer(100);
  AgentOptions zeroWidth;
  zeroWidth.beamWidth = 0;
  EXPECT_EQ(runAgent(AgentKind::kBeam, scorer, zeroWidth, 1).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(Agents, NamesParseBackAndUnknownOnesAreNamed) {
  for (AgentKind kind : kAllAgents) EXPECT_EQ(*parseAgentKind(agentName(kind)), kind);
  auto unknown = parseAgentKind("simulated-annealing");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("simulated-annealing"), std::string::npos);
}

TEST(Agents, BenchmarkSeedsDependOnTheRunSeedAndTheUri) {
  EXPECT_EQ(benchmarkSeed(1, "benchmark://a/b"), benchmarkSeed(1, "benchmark://a/b"));
  EXPECT_NE(benchmarkSeed(1, "benchmark://a/b"), benchmarkSeed(2, "benchmark://a/b"));
  EXPECT_NE(benchmarkSeed(1, "benchmark://a/b"), benchmarkSeed(1, "benchmark://a/c"));
}

}  // namespace
}  // namespace kiln::eval
