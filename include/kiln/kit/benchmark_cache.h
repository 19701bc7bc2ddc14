// The per-process benchmark cache shared by all sessions of a worker: URI ->
// program bytes, bounded in bytes only. A BoundedCache (include/kiln/kit/bounded_cache.h)
// with its eviction policy and counters, keyed by URI and holding programs
// rather than entries, as its users (sessions, hosts, the nesting host) want.
// Thread-safe: sessions on different threads look up and insert concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <kiln/ids.h>
#include <kiln/kit/bounded_cache.h>

namespace kiln {

// One program as the bounded cache holds it.
struct CachedProgram {
  std::string uri;
  std::shared_ptr<const std::string> program;

  const std::string& key() const { return uri; }
  std::uint64_t sizeInBytes() const { return program ? program->size() : 0; }
};

// Private inheritance: the entry-count bound and entry-typed get/insert of
// the general cache are not part of this one's interface.
class BenchmarkCache : private BoundedCache<CachedProgram> {
 public:
  explicit BenchmarkCache(std::uint64_t maxSizeInBytes = 256u << 20,
                          EvictionPolicy policy = EvictionPolicy::kLeastRecentlyUsed,
                          std::uint64_t randomSeed = 0xC0FFEE)
      : BoundedCache(std::nullopt, maxSizeInBytes, policy, randomSeed) {}

  // The program of `uri`, refreshing its recency; nullptr on a miss.
  std::shared_ptr<const std::string> get(const std::string& uri);
  // Adds or replaces. A program larger than the whole cache is not kept.
  void insert(const std::string& uri, std::shared_ptr<const std::string> program);

  using BoundedCache::contains;
  using BoundedCache::counters;
  using BoundedCache::erase;
  using BoundedCache::evictToCapacity;
  using BoundedCache::maxSizeInBytes;
  using BoundedCache::policy;
  using BoundedCache::setMaxSizeInBytes;
  using BoundedCache::size;
  using BoundedCache::sizeInBytes;

  // For its worker parameters (include/kiln/kit/cache_parameters.h), which see no
  // entry bound and so offer no entry-count keys.
  CacheControls& controls() { return *this; }
};

// Where a client's own bytes (inline or AddBenchmark) are cached: a key no URI
// can spell (it starts with a NUL byte, which Cap'n Proto text cannot carry),
// so that they never answer another client's request for the same URI.
std::string privateCacheKey(ClientId client, const std::string& uri);

}  // namespace kiln
