// The benchmark cache: byte bound, eviction to half on overflow, counters,
// run-time parameters, and why least-recently-used beats random eviction.
#include <gtest/gtest.h>

#include <random>

#include <kiln/kit/benchmark_cache.h>
#include <kiln/kit/cache_parameters.h>

namespace kiln {
namespace {

std::shared_ptr<const std::string> bytes(std::size_t n) {
  return std::make_shared<const std::string>(n, 'b');
}

TEST(BenchmarkCacheTest, HitsMissesAndSizes) {
  BenchmarkCache cache(1000);
  EXPECT_EQ(cache.get("a"), nullptr);
  cache.insert("a", bytes(100));
  cache.insert("b", bytes(200));
  EXPECT_NE(cache.get("a"), nullptr);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.sizeInBytes(), 300u);
  CacheCounters c = cache.counters();
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.misses, 1u);
  cache.insert("a", bytes(50));  // replace
  EXPECT_EQ(cache.sizeInBytes(), 250u);
}

TEST(BenchmarkCacheTest, OverflowEvictsLeastRecentlyUsedDownToHalf) {
  BenchmarkCache cache(1000);
  for (int i = 0; i < 9; ++i) cache.insert("p" + std::to_string(i), bytes(100));
  ASSERT_NE(cache.get("p0"), nullptr);  // p0 is now the most recently used
  cache.insert("big", bytes(300));      // 900 + 300 > 1000: evict to <= 500 first
  EXPECT_LE(cache.sizeInBytes(), 1000u);
  EXPECT_LE(cache.sizeInBytes() - 300, 500u);
  EXPECT_TRUE(cache.contains("p0"));
  EXPECT_TRUE(cache.contains("big"));
  EXPECT_FALSE(cache.contains("p1"));  // the least recently used went first
  EXPECT_GT(cache.counters().evictions, 0u);
}

TEST(BenchmarkCacheTest, ProgramLargerThanCacheIsNotKept) {
  BenchmarkCache cache(100);
  cache.insert("huge", bytes(101));
  EXPECT_FALSE(cache.contains("huge"));
  EXPECT_EQ(cache.sizeInBytes(), 0u);
}

TEST(BenchmarkCacheTest, ShrinkingTheBoundAndEvictToCapacity) {
  BenchmarkCache cache(1000);
  for (int i = 0; i < 10; ++i) cache.insert("p" + std::to_string(i), bytes(100));
  cache.setMaxSizeInBytes(400);
  EXPECT_LE(cache.sizeInBytes(), 400u);
  cache.evictToCapacity(100);
  EXPECT_LE(cache.sizeInBytes(), 100u);
  EXPECT_EQ(cache.maxSizeInBytes(), 400u);
}

TEST(CacheParametersTest, ReadAndSetAtRunTime) {
  BenchmarkCache cache(1000);
  cache.insert("a", bytes(10));
  EXPECT_EQ(*handleCacheParameter(cache, "service.benchmark_cache.get_size_in_bytes", ""), "10");
  EXPECT_EQ(*handleCacheParameter(cache, "service.benchmark_cache.set_max_size_in_bytes", "5"),
            "5");
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(handleCacheParameter(cache, "service.benchmark_cache.set_max_size_in_bytes", "-3")
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(handleCacheParameter(cache, "service.nope", "").status().code(), ErrorCode::kNotFound);
}

// The bound a cache was built with is the operator's (--cache-bytes for the
// benchmark cache): a client may lower it and raise it back, never above.
TEST(CacheParametersTest, AClientMayNotRaiseACacheAboveTheOperatorsBound) {
  BenchmarkCache cache(1000);
  const std::string set = "service.benchmark_cache.set_max_size_in_bytes";
  auto raised = handleCacheParameter(cache, set, "1001");
  ASSERT_FALSE(raised.ok());
  EXPECT_EQ(raised.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(raised.status().message().find("--cache-bytes"), std::string::npos)
      << raised.status().toString();
  EXPECT_EQ(handleCacheParameter(cache, set, "18446744073709551615").status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(cache.maxSizeInBytes(), 1000u);
  EXPECT_EQ(*handleCacheParameter(cache, set, "10"), "10");
  EXPECT_EQ(*handleCacheParameter(cache, set, "1000"), "1000");  // back up to the bound

  // Caches bounded in entries too (the llvm types'): both bounds hold.
  BoundedCache<CachedProgram> entries(8, 1000);
  const std::string prefix = "service.transition_cache.";
  auto moreEntries = handleCacheParameter(entries, prefix, prefix + "set_max_size", "9");
  EXPECT_EQ(moreEntries.status().code(), ErrorCode::kPermissionDenied)
      << moreEntries.status().toString();
  auto moreBytes = handleCacheParameter(entries, prefix, prefix + "set_max_size_in_bytes", "2000");
  EXPECT_EQ(moreBytes.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(*handleCacheParameter(entries, prefix, prefix + "set_max_size", "0"), "0");
  EXPECT_EQ(*handleCacheParameter(entries, prefix, prefix + "set_max_size", "8"), "8");
  EXPECT_EQ(entries.maxSizeInBytes(), 1000u);
}

// The handler is shared with the llvm caches, which are bounded in entries
// too; the benchmark cache (bytes only) must not grow their keys.
TEST(CacheParametersTest, BenchmarkCacheOffersNoEntryCountKeys) {
  BenchmarkCache cache(1000);
  for (const char* key :
       {"service.benchmark_cache.get_max_size", "service.benchmark_cache.set_max_size"}) {
    auto reply = handleCacheParameter(cache, key, "4");
    ASSERT_FALSE(reply.ok()) << key;
    EXPECT_EQ(reply.status().code(), ErrorCode::kNotFound);
    EXPECT_NE(reply.status().message().find(
                  "(known: get_max_size_in_bytes, set_max_size_in_bytes, get_size_in_bytes, "
                  "get_size, get_counters, evict_to_capacity)"),
              std::string::npos)
        << reply.status().message();
  }
  EXPECT_EQ(cache.maxSizeInBytes(), 1000u);
}

// Why LRU: RL training revisits a small hot set of benchmarks (the current
// curriculum) among a long tail. With a cache smaller than the working set,
// random eviction throws hot programs out as often as cold ones.
double hitRate(EvictionPolicy policy) {
  BenchmarkCache cache(50 * 100, policy, 7);
  std::mt19937 random(1);
  std::uniform_int_distribution<int> hot(0, 29), cold(30, 2029);
  std::bernoulli_distribution pickHot(0.8);
  int hits = 0, lookups = 20000;
  for (int i = 0; i < lookups; ++i) {
    std::string uri = "bench/" + std::to_string(pickHot(random) ? hot(random) : cold(random));
    if (cache.get(uri)) {
      ++hits;
    } else {
      cache.insert(uri, bytes(100));
    }
  }
  return static_cast<double>(hits) / lookups;
}

TEST(BenchmarkCacheTest, LeastRecentlyUsedBeatsRandomOnASkewedWorkload) {
  double lru = hitRate(EvictionPolicy::kLeastRecentlyUsed);
  double random = hitRate(EvictionPolicy::kRandom);
  EXPECT_GT(lru, random + 0.05) << "lru " << lru << " random " << random;
}

}  // namespace
}  // namespace kiln
