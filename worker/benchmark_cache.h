// The per-process benchmark cache shared by all sessions of a worker: URI ->
// program bytes, bounded in bytes. When an insert would exceed the bound it
// evicts down to half of it. The victim policy is least recently used by
// default; uniformly random (CompilerGym's policy) is kept for comparison.
// Thread-safe: sessions on different threads look up and insert concurrently.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln {

enum class EvictionPolicy : std::uint8_t { kLeastRecentlyUsed, kRandom };

struct CacheCounters {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t inserts = 0;
};

// The eviction policy shared by every bounded cache of a worker (this one
// and session types' caches, e.g. parsed modules), as pure functions.
// What to evict down to when `incoming` more would exceed `bound`: half the
// bound (not just enough), so a burst of inserts does not pay for an
// eviction each.
std::uint64_t evictionTarget(std::uint64_t bound, std::uint64_t incoming);
// Which entry to evict, as a position in recency order (0 = most recently
// used) among `entries` > 0.
std::size_t victimPosition(EvictionPolicy policy, std::size_t entries, std::mt19937_64& random);

class BenchmarkCache {
 public:
  explicit BenchmarkCache(std::uint64_t maxSizeInBytes = 256u << 20,
                          EvictionPolicy policy = EvictionPolicy::kLeastRecentlyUsed,
                          std::uint64_t randomSeed = 0xC0FFEE);

  // The program of `uri`, refreshing its recency; nullptr on a miss.
  std::shared_ptr<const std::string> get(const std::string& uri);
  bool contains(const std::string& uri) const;
  // Adds or replaces. A program larger than the whole cache is not kept.
  void insert(const std::string& uri, std::shared_ptr<const std::string> program);
  bool erase(const std::string& uri);

  std::size_t size() const;
  std::uint64_t sizeInBytes() const;
  std::uint64_t maxSizeInBytes() const;
  // Changing the bound evicts down to it if needed.
  void setMaxSizeInBytes(std::uint64_t bytes);
  // Evicts until at most `targetBytes` are held.
  void evictToCapacity(std::uint64_t targetBytes);
  CacheCounters counters() const;
  EvictionPolicy policy() const { return policy_; }

 private:
  struct Entry {
    std::string uri;
    std::shared_ptr<const std::string> program;
  };
  using Order = std::list<Entry>;  // front = most recently used

  void evictLocked(std::uint64_t targetBytes);
  void eraseLocked(Order::iterator it);

  mutable std::mutex mutex_;
  const EvictionPolicy policy_;
  std::uint64_t maxSizeInBytes_;
  std::uint64_t sizeInBytes_ = 0;
  Order order_;
  std::unordered_map<std::string, Order::iterator> index_;
  std::mt19937_64 random_;
  CacheCounters counters_;
};

}  // namespace kiln
