// A bounded, thread-safe map from a string key to shared immutable entries,
// used by the `llvm` type's per-process caches (parsed benchmarks, step
// transitions). Bounded in entries AND bytes with the benchmark cache's
// eviction policy and counters (worker/benchmark_cache.h). Entries are
// shared: a holder keeps using an entry that has since been evicted.
// Entry needs `const std::string& key() const` and
// `std::uint64_t sizeInBytes() const`.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"
#include "worker/benchmark_cache.h"

namespace kiln::llvmsession {

template <class Entry>
class BoundedCache {
 public:
  BoundedCache(std::size_t maxSize, std::uint64_t maxSizeInBytes,
               EvictionPolicy policy = EvictionPolicy::kLeastRecentlyUsed,
               std::uint64_t randomSeed = 0xC0FFEE)
      : policy_(policy), maxSize_(maxSize), maxSizeInBytes_(maxSizeInBytes), random_(randomSeed) {}

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

  // Adds or replaces. An entry larger than the whole byte bound is not kept;
  // nothing is kept while either bound is 0 (the cache is disabled).
  void insert(std::shared_ptr<const Entry> entry) {
    if (entry == nullptr) return;
    std::lock_guard lock(mutex_);
    if (auto found = index_.find(entry->key()); found != index_.end()) {
      sizeInBytes_ -= (*found->second)->sizeInBytes();
      order_.erase(found->second);
      index_.erase(found);
    }
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

  // False while a bound is 0: callers skip the work of a lookup.
  bool enabled() const {
    std::lock_guard lock(mutex_);
    return maxSize_ > 0 && maxSizeInBytes_ > 0;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return order_.size();
  }
  std::uint64_t sizeInBytes() const {
    std::lock_guard lock(mutex_);
    return sizeInBytes_;
  }
  std::size_t maxSize() const {
    std::lock_guard lock(mutex_);
    return maxSize_;
  }
  std::uint64_t maxSizeInBytes() const {
    std::lock_guard lock(mutex_);
    return maxSizeInBytes_;
  }
  // Changing a bound evicts down to it if needed.
  void setMaxSize(std::size_t entries) {
    std::lock_guard lock(mutex_);
    maxSize_ = entries;
    evictLocked(maxSize_, maxSizeInBytes_);
  }
  void setMaxSizeInBytes(std::uint64_t bytes) {
    std::lock_guard lock(mutex_);
    maxSizeInBytes_ = bytes;
    evictLocked(maxSize_, maxSizeInBytes_);
  }
  // Evicts until at most `targetBytes` are held.
  void evictToCapacity(std::uint64_t targetBytes) {
    std::lock_guard lock(mutex_);
    evictLocked(maxSize_, targetBytes);
  }
  CacheCounters counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
  }

 private:
  using Order = std::list<std::shared_ptr<const Entry>>;  // front = most recent

  void evictLocked(std::size_t targetEntries, std::uint64_t targetBytes) {
    while (!order_.empty() && (order_.size() > targetEntries || sizeInBytes_ > targetBytes)) {
      const std::size_t position = victimPosition(policy_, order_.size(), random_);
      auto victim = position + 1 == order_.size()
                        ? std::prev(order_.end())
                        : std::next(order_.begin(), static_cast<long>(position));
      sizeInBytes_ -= (*victim)->sizeInBytes();
      index_.erase((*victim)->key());
      order_.erase(victim);
      ++counters_.evictions;
    }
  }

  mutable std::mutex mutex_;
  const EvictionPolicy policy_;
  std::size_t maxSize_;
  std::uint64_t maxSizeInBytes_;
  std::uint64_t sizeInBytes_ = 0;
  Order order_;
  std::unordered_map<std::string, typename Order::iterator> index_;
  std::mt19937_64 random_;
  CacheCounters counters_;
};

// The figures and bounds a cache's worker parameters read and set.
struct CacheControl {
  std::size_t size;
  std::uint64_t sizeInBytes;
  std::size_t maxSize;
  std::uint64_t maxSizeInBytes;
  CacheCounters counters;
};

// Worker parameters `<prefix>{get_counters, get_size, get_size_in_bytes,
// get_max_size, set_max_size, get_max_size_in_bytes, set_max_size_in_bytes,
// evict_to_capacity}` of any BoundedCache. notFound for keys outside
// `prefix`, so other handlers get their turn.
template <class Entry>
Result<std::string> handleCacheParameter(BoundedCache<Entry>& cache, std::string_view prefix,
                                         const std::string& key, const std::string& value);

namespace detail {
// The non-template part: `apply` runs a setter (by name) with the parsed count.
Result<std::string> handleCacheParameter(
    std::string_view prefix, const std::string& key, const std::string& value,
    const std::function<CacheControl()>& read,
    const std::function<void(std::string_view setter, std::uint64_t count)>& apply);
}  // namespace detail

template <class Entry>
Result<std::string> handleCacheParameter(BoundedCache<Entry>& cache, std::string_view prefix,
                                         const std::string& key, const std::string& value) {
  return detail::handleCacheParameter(
      prefix, key, value,
      [&] {
        return CacheControl{cache.size(), cache.sizeInBytes(), cache.maxSize(),
                            cache.maxSizeInBytes(), cache.counters()};
      },
      [&](std::string_view setter, std::uint64_t count) {
        if (setter == "set_max_size") cache.setMaxSize(static_cast<std::size_t>(count));
        if (setter == "set_max_size_in_bytes") cache.setMaxSizeInBytes(count);
        if (setter == "evict_to_capacity") cache.evictToCapacity(count);
      });
}

}  // namespace kiln::llvmsession
