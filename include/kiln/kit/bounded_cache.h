// The one bounded cache of a worker: a thread-safe map from a string key to
// shared immutable entries, bounded in bytes and optionally in entries. When
// an insert would exceed a bound it evicts down to half of it, least recently
// used first by default (uniformly random, CompilerGym's policy, is kept for
// comparison). Users: the benchmark cache (include/kiln/kit/benchmark_cache.h, bytes
// only) and the `llvm` type's parsed-module and transition caches. Entries
// are shared: a holder keeps using an entry that has since been evicted.
// Entry needs `const std::string& key() const` and
// `std::uint64_t sizeInBytes() const`.
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

namespace kiln {

enum class EvictionPolicy : std::uint8_t { kLeastRecentlyUsed, kRandom };

struct CacheCounters {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t inserts = 0;
};

// The eviction policy shared by every bounded cache of a worker, as pure
// functions.
// What to evict down to when `incoming` more would exceed `bound`: half the
// bound (not just enough), so a burst of inserts does not pay for an
// eviction each.
std::uint64_t evictionTarget(std::uint64_t bound, std::uint64_t incoming);
// Which entry to evict, as a position in recency order (0 = most recently
// used) among `entries` > 0.
std::size_t victimPosition(EvictionPolicy policy, std::size_t entries, std::mt19937_64& random);

// What a cache's worker parameters read and set, whatever its entries, so
// that one handler (include/kiln/kit/cache_parameters.h) serves every cache.
class CacheControls {
 public:
  virtual ~CacheControls() = default;
  // False for a cache bounded in bytes only: it has no entry-count keys.
  virtual bool boundsEntries() const = 0;
  virtual std::size_t size() const = 0;
  virtual std::uint64_t sizeInBytes() const = 0;
  virtual std::size_t maxSize() const = 0;
  virtual std::uint64_t maxSizeInBytes() const = 0;
  // The bounds the cache was built with: the operator's, which a client's
  // parameter may lower but never raise (include/kiln/kit/cache_parameters.h).
  virtual std::size_t operatorMaxSize() const = 0;
  virtual std::uint64_t operatorMaxSizeInBytes() const = 0;
  // Changing a bound evicts down to it if needed.
  virtual void setMaxSize(std::size_t entries) = 0;
  virtual void setMaxSizeInBytes(std::uint64_t bytes) = 0;
  // Evicts until at most `targetBytes` are held.
  virtual void evictToCapacity(std::uint64_t targetBytes) = 0;
  virtual CacheCounters counters() const = 0;
};

template <class Entry>
class BoundedCache : public CacheControls {
 public:
  // `maxSize` empty: bounded in bytes only.
  BoundedCache(std::optional<std::size_t> maxSize, std::uint64_t maxSizeInBytes,
               EvictionPolicy policy = EvictionPolicy::kLeastRecentlyUsed,
               std::uint64_t randomSeed = 0xC0FFEE)
      : policy_(policy),
        boundsEntries_(maxSize.has_value()),
        maxSize_(maxSize.value_or(std::numeric_limits<std::size_t>::max())),
        maxSizeInBytes_(maxSizeInBytes),
        operatorMaxSize_(maxSize_),
        operatorMaxSizeInBytes_(maxSizeInBytes),
        random_(randomSeed) {}

  // The entry of `key`, refreshing its recency; nullptr on a miss.
  std::shared_ptr<const Entry> get(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto found = index_.find(key);
    if (found == index_.end()) {
      ++counters_.misses;
      return nullptr;
    }
    ++counters_.hits;
    order_.splice(order_.begin(), order_, found->second);
    return *found->second;
  }

  // Neither a hit nor a miss: recency and counters stay as they are.
  bool contains(const std::string& key) const {
    std::lock_guard lock(mutex_);
    return index_.count(key) != 0;
  }

  // Adds or replaces. An entry larger than the whole byte bound is not kept;
  // nothing is kept while the entry bound is 0 (the cache is disabled).
  void insert(std::shared_ptr<const Entry> entry) {
    if (entry == nullptr) return;
    std::lock_guard lock(mutex_);
    if (auto found = index_.find(entry->key()); found != index_.end()) eraseLocked(found->second);
    const std::uint64_t bytes = entry->sizeInBytes();
    if (bytes > maxSizeInBytes_ || maxSize_ == 0) return;
    const bool overBytes = sizeInBytes_ + bytes > maxSizeInBytes_;
    const bool overCount = order_.size() + 1 > maxSize_;
    if (overBytes || overCount) {
      // Whichever bound is hit, evict down to half of it (the shared policy).
      evictLocked(overCount ? static_cast<std::size_t>(evictionTarget(maxSize_, 1)) : maxSize_,
                  overBytes ? evictionTarget(maxSizeInBytes_, bytes) : maxSizeInBytes_);
    }
    order_.push_front(entry);
    index_[entry->key()] = order_.begin();
    sizeInBytes_ += bytes;
    ++counters_.inserts;
  }

  // Removes `key` (not counted as an eviction); false if it was not held.
  bool erase(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto found = index_.find(key);
    if (found == index_.end()) return false;
    eraseLocked(found->second);
    return true;
  }

  // False while a bound is 0: callers skip the work of a lookup.
  bool enabled() const {
    std::lock_guard lock(mutex_);
    return maxSize_ > 0 && maxSizeInBytes_ > 0;
  }
  EvictionPolicy policy() const { return policy_; }

  bool boundsEntries() const override { return boundsEntries_; }
  std::size_t size() const override {
    std::lock_guard lock(mutex_);
    return order_.size();
  }
  std::uint64_t sizeInBytes() const override {
    std::lock_guard lock(mutex_);
    return sizeInBytes_;
  }
  std::size_t maxSize() const override {
    std::lock_guard lock(mutex_);
    return maxSize_;
  }
  std::uint64_t maxSizeInBytes() const override {
    std::lock_guard lock(mutex_);
    return maxSizeInBytes_;
  }
  std::size_t operatorMaxSize() const override { return operatorMaxSize_; }
  std::uint64_t operatorMaxSizeInBytes() const override { return operatorMaxSizeInBytes_; }
  void setMaxSize(std::size_t entries) override {
    std::lock_guard lock(mutex_);
    maxSize_ = entries;
    evictLocked(maxSize_, maxSizeInBytes_);
  }
  void setMaxSizeInBytes(std::uint64_t bytes) override {
    std::lock_guard lock(mutex_);
    maxSizeInBytes_ = bytes;
    evictLocked(maxSize_, maxSizeInBytes_);
  }
  void evictToCapacity(std::uint64_t targetBytes) override {
    std::lock_guard lock(mutex_);
    evictLocked(maxSize_, targetBytes);
  }
  CacheCounters counters() const override {
    std::lock_guard lock(mutex_);
    return counters_;
  }

 private:
  using Order = std::list<std::shared_ptr<const Entry>>;  // front = most recent

  void evictLocked(std::size_t targetEntries, std::uint64_t targetBytes) {
    while (!order_.empty() && (order_.size() > targetEntries || sizeInBytes_ > targetBytes)) {
      const std::size_t position = victimPosition(policy_, order_.size(), random_);
      // Walking from the nearer end keeps the usual LRU victim O(1).
      auto victim = position + 1 == order_.size()
                        ? std::prev(order_.end())
                        : std::next(order_.begin(), static_cast<long>(position));
      eraseLocked(victim);
      ++counters_.evictions;
    }
  }

  void eraseLocked(typename Order::iterator it) {
    sizeInBytes_ -= (*it)->sizeInBytes();
    index_.erase((*it)->key());
    order_.erase(it);
  }

  mutable std::mutex mutex_;
  const EvictionPolicy policy_;
  const bool boundsEntries_;
  std::size_t maxSize_;
  std::uint64_t maxSizeInBytes_;
  const std::size_t operatorMaxSize_;
  const std::uint64_t operatorMaxSizeInBytes_;
  std::uint64_t sizeInBytes_ = 0;
  Order order_;
  std::unordered_map<std::string, typename Order::iterator> index_;
  std::mt19937_64 random_;
  CacheCounters counters_;
};

}  // namespace kiln
