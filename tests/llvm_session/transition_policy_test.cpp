// The transition cache without LLVM work: the recording policy, the keys,
// both bounds with the shared eviction policy, and its worker parameters.
#include <gtest/gtest.h>

#include "compilers/llvm_session/transition_cache.h"

namespace kiln::llvm_session {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

llvm_engine::StateDigest digestOf(std::uint8_t seed) {
  llvm_engine::StateDigest digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) digest[i] = static_cast<std::uint8_t>(seed + i);
  return digest;
}

std::shared_ptr<const Transition> changing(std::uint8_t state, std::size_t pass,
                                           std::size_t bytes) {
  llvm_engine::SerializedModule after{"m", std::string(bytes, 'b'), ""};
  return std::make_shared<const Transition>(transitionKey(digestOf(state), pass), true,
                                            std::move(after), digestOf(state + 1),
                                            microseconds(500));
}

TEST(TransitionPolicyTest, HitCostGrowsWithTheStateAndNoChangeCostsALookup) {
  const HitCostModel model;
  EXPECT_EQ(estimatedHitCost(model, false, 1 << 20, 1 << 20), model.lookup);
  const Duration small = estimatedHitCost(model, true, 10'000, 50'000);
  const Duration large = estimatedHitCost(model, true, 100'000, 500'000);
  EXPECT_GT(small, model.lookup + model.newContext);
  EXPECT_GT(large, small);
  // 10 KB of bitcode read at 40 ns/byte + 60 KB copied at 0.5 ns/byte.
  EXPECT_EQ(std::chrono::duration_cast<nanoseconds>(small - model.lookup - model.newContext),
            nanoseconds(400'000 + 30'000));
}

TEST(TransitionPolicyTest, OnlyStepsDearerThanAHitAreRecorded) {
  EXPECT_TRUE(worthRecording(microseconds(101), microseconds(100)));
  EXPECT_FALSE(worthRecording(microseconds(100), microseconds(100)));
  EXPECT_FALSE(worthRecording(microseconds(5), microseconds(100)));
  // A cheap no-effect pass on a small module against a hit that replaces a
  // large one: not recorded; a no-change hit is only a lookup.
  const HitCostModel model;
  EXPECT_FALSE(worthRecording(microseconds(30), estimatedHitCost(model, true, 12'000, 60'000)));
  EXPECT_TRUE(worthRecording(microseconds(30), estimatedHitCost(model, false, 0, 0)));
}

TEST(TransitionPolicyTest, KeysDifferByStateAndByPass) {
  EXPECT_EQ(transitionKey(digestOf(1), 7), transitionKey(digestOf(1), 7));
  EXPECT_NE(transitionKey(digestOf(1), 7), transitionKey(digestOf(1), 8));
  EXPECT_NE(transitionKey(digestOf(1), 7), transitionKey(digestOf(2), 7));
  // Pass indices above 255 are not truncated to a byte.
  EXPECT_NE(transitionKey(digestOf(1), 1), transitionKey(digestOf(1), 257));
}

TEST(TransitionCacheTest, BoundedInCountAndBytesWithCounters) {
  TransitionCache cache(/*maxSize=*/4, /*maxSizeInBytes=*/1 << 20);
  for (std::uint8_t i = 0; i < 4; ++i)
    cache.insert(changing(static_cast<std::uint8_t>(i * 2), 0, 1000));
  EXPECT_EQ(cache.size(), 4u);
  ASSERT_NE(cache.get(transitionKey(digestOf(0), 0)), nullptr);  // now the most recent
  EXPECT_EQ(cache.get(transitionKey(digestOf(0), 1)), nullptr);  // other pass: a miss
  cache.insert(changing(100, 0, 1000));                          // over the count: down to 2
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.get(transitionKey(digestOf(0), 0)), nullptr);
  EXPECT_EQ(cache.get(transitionKey(digestOf(2), 0)), nullptr);  // least recently used: gone
  CacheCounters c = cache.counters();
  EXPECT_EQ(c.inserts, 5u);
  EXPECT_EQ(c.evictions, 2u);
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.misses, 2u);

  TransitionCache bytes(/*maxSize=*/1000, /*maxSizeInBytes=*/20'000);
  for (std::uint8_t i = 0; i < 50; ++i) {
    bytes.insert(changing(i, 3, 1500));
    EXPECT_LE(bytes.sizeInBytes(), 20'000u);
  }
  EXPECT_GT(bytes.counters().evictions, 0u);
  EXPECT_GT(bytes.size(), 0u);
  bytes.insert(changing(200, 3, 30'000));  // larger than the whole bound: not kept
  EXPECT_EQ(bytes.get(transitionKey(digestOf(200), 3)), nullptr);
}

TEST(TransitionCacheTest, NoChangeEntriesCountAgainstTheByteBoundToo) {
  auto noChange = std::make_shared<const Transition>(transitionKey(digestOf(9), 1), false,
                                                     std::nullopt, digestOf(9), microseconds(40));
  EXPECT_EQ(noChange->after(), nullptr);
  EXPECT_GE(noChange->sizeInBytes(), 100u);
  EXPECT_LT(noChange->sizeInBytes(), 1000u);
  EXPECT_GT(changing(1, 1, 5000)->sizeInBytes(), 5000u);
}

TEST(TransitionCacheTest, ZeroBoundDisablesAndParametersControlIt) {
  TransitionCache cache(16, 1 << 20);
  EXPECT_TRUE(cache.enabled());
  const std::string prefix(kTransitionCachePrefix);
  auto set = handleCacheParameter(cache, kTransitionCachePrefix, prefix + "set_max_size", "0");
  ASSERT_TRUE(set.ok()) << set.status().toString();
  EXPECT_EQ(*set, "0");
  EXPECT_FALSE(cache.enabled());
  cache.insert(changing(1, 1, 10));
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(*handleCacheParameter(cache, kTransitionCachePrefix, prefix + "set_max_size", "8"),
            "8");
  cache.insert(changing(1, 1, 10));
  EXPECT_EQ(*handleCacheParameter(cache, kTransitionCachePrefix, prefix + "get_size", ""), "1");
  EXPECT_EQ(*handleCacheParameter(cache, kTransitionCachePrefix, prefix + "get_counters", ""),
            "hits=0 misses=0 evictions=0 inserts=1");
  auto bad = handleCacheParameter(cache, kTransitionCachePrefix, prefix + "set_max_size", "-3");
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      handleCacheParameter(cache, kTransitionCachePrefix, prefix + "nope", "").status().code(),
      ErrorCode::kNotFound);
  EXPECT_EQ(handleCacheParameter(cache, kTransitionCachePrefix,
                                 "service.parsed_module_cache.get_size", "")
                .status()
                .code(),
            ErrorCode::kNotFound);
}

}  // namespace
}  // namespace kiln::llvm_session
