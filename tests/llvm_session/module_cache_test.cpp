// The parsed-module cache: both bounds (entries and bytes), the shared
// eviction policy, counters, its worker parameters and hostile values.
#include <gtest/gtest.h>

#include <kiln/client/datasets.h>
#include "compilers/llvm_session/llvm_context.h"
#include "compilers/llvm_session/module_cache.h"

namespace kiln::llvm_session {
namespace {

std::shared_ptr<const CachedModule> entry(const std::string& key, std::size_t bytes) {
  llvm_engine::SerializedModule module{key, std::string(bytes, 'b'), ""};
  return std::make_shared<const CachedModule>(key, std::move(module), 1);
}

TEST(ParsedModuleCacheTest, HitsMissesAndLeastRecentlyUsedEvictionByCount) {
  ParsedModuleCache cache(/*maxSize=*/4, /*maxSizeInBytes=*/1 << 20);
  for (int i = 0; i < 4; ++i) cache.insert(entry("m" + std::to_string(i), 100));
  EXPECT_EQ(cache.size(), 4u);
  ASSERT_NE(cache.get("m0"), nullptr);  // m0 is now the most recent
  EXPECT_EQ(cache.get("nope"), nullptr);
  cache.insert(entry("m4", 100));  // over the count: down to half (2), then m4
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_NE(cache.get("m0"), nullptr);
  EXPECT_NE(cache.get("m4"), nullptr);
  EXPECT_EQ(cache.get("m1"), nullptr);
  const CacheCounters c = cache.counters();
  EXPECT_EQ(c.inserts, 5u);
  EXPECT_EQ(c.evictions, 2u);
  EXPECT_EQ(c.hits, 3u);
  EXPECT_EQ(c.misses, 2u);
}

TEST(ParsedModuleCacheTest, BoundedInBytesAndOversizeEntriesAreNotKept) {
  ParsedModuleCache cache(/*maxSize=*/100, /*maxSizeInBytes=*/1000);
  cache.insert(entry("huge", 1001));
  EXPECT_EQ(cache.size(), 0u);
  for (int i = 0; i < 10; ++i) cache.insert(entry("m" + std::to_string(i), 100));
  EXPECT_EQ(cache.sizeInBytes(), 1000u);
  cache.insert(entry("m10", 100));  // evicts down to 500 first
  EXPECT_LE(cache.sizeInBytes(), 600u);
  EXPECT_NE(cache.get("m10"), nullptr);
  cache.setMaxSizeInBytes(200);
  EXPECT_LE(cache.sizeInBytes(), 200u);
}

TEST(ParsedModuleCacheTest, EvictedEntriesStayAliveForTheirHolders) {
  ParsedModuleCache cache(1, 1 << 20);
  cache.insert(entry("a", 10));
  auto held = cache.get("a");
  cache.insert(entry("b", 10));
  EXPECT_EQ(cache.get("a"), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->module().bitcode.size(), 10u);
}

TEST(ParsedModuleCacheTest, BaselinesAreComputedOnce) {
  auto e = entry("a", 10);
  int calls = 0;
  auto compute = [&](const llvm_engine::SerializedModule&) -> Result<llvm_engine::Baselines> {
    ++calls;
    llvm_engine::Baselines b;
    b.instCountOz = 7;
    return b;
  };
  EXPECT_EQ(e->baselines(compute)->instCountOz, 7);
  EXPECT_EQ(e->baselines(compute)->instCountOz, 7);
  EXPECT_EQ(calls, 1);
}

TEST(ParsedModuleCacheTest, ParametersReadAndSetTheCacheAndRejectBadValues) {
  ParsedModuleCache cache(8, 1 << 20);
  cache.insert(entry("a", 300));
  (void)cache.get("a");
  EXPECT_EQ(*handleModuleCacheParameter(cache, "service.parsed_module_cache.get_size", ""), "1");
  EXPECT_EQ(*handleModuleCacheParameter(cache, "service.parsed_module_cache.get_size_in_bytes", ""),
            "300");
  EXPECT_EQ(*handleModuleCacheParameter(cache, "service.parsed_module_cache.get_counters", ""),
            "hits=1 misses=0 evictions=0 inserts=1");
  EXPECT_EQ(*handleModuleCacheParameter(cache, "service.parsed_module_cache.set_max_size_in_bytes",
                                        "100"),
            "100");
  EXPECT_EQ(cache.size(), 0u);
  for (const char* bad : {"", "-1", "12abc", "99999999999999999999999"}) {
    auto r =
        handleModuleCacheParameter(cache, "service.parsed_module_cache.set_max_size_in_bytes", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("unsigned integer"), std::string::npos);
  }
  EXPECT_EQ(cache.maxSizeInBytes(), 100u);
  auto unknown = handleModuleCacheParameter(cache, "service.parsed_module_cache.frobnicate", "");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(handleModuleCacheParameter(cache, "llvm.datasets", "").status().code(),
            ErrorCode::kNotFound);
}

TEST(LlvmContextHelpersTest, BitcodeDetectionAndContentKeyedCacheKeys) {
  EXPECT_TRUE(looksLikeBitcode(std::string("BC\xC0\xDE\x35\x14", 6)));
  EXPECT_TRUE(looksLikeBitcode(std::string("\xDE\xC0\x17\x0B", 4)));
  EXPECT_FALSE(looksLikeBitcode("define i32 @f() {\n  ret i32 0\n}\n"));
  EXPECT_FALSE(looksLikeBitcode("BC"));
  EXPECT_NE(moduleCacheKey("file:///a.bc", "one"), moduleCacheKey("file:///a.bc", "two"));
  EXPECT_EQ(moduleCacheKey("file:///a.bc", "one"), moduleCacheKey("file:///a.bc", "one"));
  EXPECT_NE(moduleCacheKey("file:///a.bc", "one"), moduleCacheKey("file:///b.bc", "one"));
}

}  // namespace
}  // namespace kiln::llvm_session

namespace kiln::client {
namespace {

TEST(DatasetListingTest, ParsesRepliesAndRejectsMalformedLines) {
  auto ok =
      parseDatasetListing("benchmark://a-v0\t25\tsmall C programs\ngenerator://g-v0\tinf\tx\n");
  ASSERT_TRUE(ok.ok()) << ok.status().toString();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].name, "benchmark://a-v0");
  EXPECT_EQ((*ok)[0].size, 25);
  EXPECT_EQ((*ok)[0].description, "small C programs");
  EXPECT_FALSE((*ok)[1].size.has_value());
  for (const char* bad : {"no tabs here\n", "a\t-3\td\n", "a\tmany\td\n", "a\t12\n"}) {
    auto r = parseDatasetListing(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(parseDatasetListing("")->empty());
}

}  // namespace
}  // namespace kiln::client
