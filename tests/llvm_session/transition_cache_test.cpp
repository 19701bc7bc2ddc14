// The transition cache end to end on real LLVM work: `llvm` sessions of two
// per-process contexts, one with the cache disabled and one recording every
// step, stepped in lock-step with random pass sequences must agree on every
// outcome and observation, in a first episode (misses) and in replays (hits);
// failed steps are never recorded; real transitions stay within the bounds.
#include "tests/llvm_session/episodes.h"

namespace kiln::llvm_session {
namespace {

using namespace testing;

HitCostModel recordEverything() { return HitCostModel{Duration::zero(), Duration::zero(), 0, 0}; }

TEST(TransitionCacheSessionTest, CachedAndUncachedSessionsAgreeStepByStep) {
  Process off("off");
  off.context().transitionCache().setMaxSize(0);
  Process on("on");
  on.context().setHitCostModel(recordEverything());
  const std::size_t passes = on.context().passes()->size();
  std::uint64_t replayedSteps = 0;
  for (const std::string program : {"crc32", "quicksort", "dijkstra", "json_tokenizer"}) {
    for (unsigned seed = 1; seed <= 2; ++seed) {
      const auto actions = randomSequence(passes, seed * 31 + program.size(), 14);
      const auto expected = runEpisode(off, program, actions, true);
      const auto first = runEpisode(on, program, actions, true);  // mostly misses
      const CacheCounters beforeReplay = on.context().transitionCache().counters();
      const auto replay = runEpisode(on, program, actions, true);  // every step seen before
      const CacheCounters afterReplay = on.context().transitionCache().counters();
      const auto unobserved = runEpisode(on, program, actions, false);  // hits, never read
      ASSERT_EQ(first.size(), expected.size()) << program << " seed " << seed;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        EXPECT_EQ(first[i], expected[i]) << program << " seed " << seed << " step " << i;
        EXPECT_EQ(replay[i], expected[i]) << program << " seed " << seed << " step " << i;
      }
      ASSERT_FALSE(unobserved.empty());
      // Rewards depend on when they were last observed: the state only.
      if (expected.back().starts_with("ok")) {
        EXPECT_EQ(withoutRewards(unobserved.back()), withoutRewards(expected.back()));
      }
      // A replay runs no pass: one hit per successful step (failed steps
      // are run again, as misses).
      std::uint64_t okSteps = 0;
      for (std::size_t i = 0; i + 1 < expected.size(); ++i)
        okSteps += expected[i].starts_with("ok");
      EXPECT_EQ(afterReplay.hits - beforeReplay.hits, okSteps) << program << " seed " << seed;
      replayedSteps += okSteps;
    }
  }
  EXPECT_GT(replayedSteps, 50u);
  EXPECT_EQ(off.context().transitionCache().counters().inserts, 0u);
}

TEST(TransitionCacheSessionTest, ForksAndOtherSessionsShareRecordedSteps) {
  Process on("fork");
  on.context().setHitCostModel(recordEverything());
  const auto sroa = static_cast<std::int64_t>(*on.context().passes()->find("sroa"));
  const auto gvn = static_cast<std::int64_t>(*on.context().passes()->find("gvn"));
  auto parent = on.start("dijkstra");
  ActionOutcome outcome;
  ASSERT_TRUE(parent->applyAction(Value(sroa), outcome).ok());
  ASSERT_FALSE(outcome.actionHadNoEffect);
  LlvmSession fork(on.context());
  ASSERT_TRUE(fork.initAsFork(*parent).ok());
  const CacheCounters before = on.context().transitionCache().counters();
  ASSERT_TRUE(parent->applyAction(Value(gvn), outcome).ok());  // recorded
  ActionOutcome forked;
  ASSERT_TRUE(fork.applyAction(Value(gvn), forked).ok());  // replayed
  EXPECT_EQ(on.context().transitionCache().counters().hits - before.hits, 1u);
  EXPECT_EQ(forked.actionHadNoEffect, outcome.actionHadNoEffect);
  EXPECT_EQ(describeStep(fork, okStatus(), forked, true),
            describeStep(*parent, okStatus(), outcome, true));
}

TEST(TransitionCacheSessionTest, FailedStepsAreNeverRecordedAndFailAgainTheSameWay) {
  Process on("broken");
  LlvmContext& context = on.context();
  const std::string bytes = readFile(benchPath("crc32"));
  // The verifier-breaking pass is not an action; it stands in for a pass
  // that breaks the module, under a real action's index.
  const RunStep breakModule = [](llvm_engine::ModuleState& state, std::size_t) {
    return state.applyPipeline("trigger-verifier-error");
  };
  std::vector<std::string> errors;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto state = llvm_engine::ModuleState::fromBitcode(context.passes(), bytes, benchUri("crc32"));
    ASSERT_TRUE(state.ok()) << state.status().toString();
    auto stepped = applyPassThroughCache(**state, 0, context.transitionCache(), recordEverything(),
                                         SteadyClock(), breakModule);
    ASSERT_FALSE(stepped.ok());
    EXPECT_EQ(stepped.status().code(), ErrorCode::kCompileError);
    EXPECT_FALSE((*state)->usable());
    errors.push_back(stepped.status().message());
  }
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_NE(errors[0].find("invalid module"), std::string::npos) << errors[0];
  const CacheCounters counters = context.transitionCache().counters();
  EXPECT_EQ(counters.inserts, 0u);
  EXPECT_EQ(counters.misses, 2u);
  EXPECT_EQ(counters.hits, 0u);
  EXPECT_EQ(context.transitionCache().size(), 0u);
}

TEST(TransitionCacheSessionTest, RealTransitionsStayWithinBothBounds) {
  Process on("bounds");
  on.context().setHitCostModel(recordEverything());
  TransitionCache& cache = on.context().transitionCache();
  cache.setMaxSize(6);
  cache.setMaxSizeInBytes(400'000);
  const std::size_t passes = on.context().passes()->size();
  for (unsigned seed = 1; seed <= 3; ++seed) {
    auto session = on.start("json_tokenizer");
    for (std::int64_t action : randomSequence(passes, seed, 12)) {
      ActionOutcome outcome;
      if (!session->applyAction(Value(action), outcome).ok()) break;
      EXPECT_LE(cache.size(), 6u);
      EXPECT_LE(cache.sizeInBytes(), 400'000u);
    }
  }
  EXPECT_GT(cache.counters().inserts, 6u);
  EXPECT_GT(cache.counters().evictions, 0u);
  auto reply = on.context().handleParameter("service.transition_cache.get_size_in_bytes", "");
  ASSERT_TRUE(reply.ok()) << reply.status().toString();
  EXPECT_EQ(*reply, std::to_string(cache.sizeInBytes()));
}

}  // namespace
}  // namespace kiln::llvm_session
