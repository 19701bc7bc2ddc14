// The LLVM worker's cache of parsed benchmarks: key (benchmark URI + hash of
// its bytes) -> the verified module in serialized form (bitcode + canonical
// text), its instruction count, and its baselines once computed. Bounded in
// entries AND bytes, with the benchmark cache's eviction policy and counters
// (worker/benchmark_cache.h). Thread-safe; entries are shared, so a session
// keeps using an entry that has since been evicted.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>

#include "common/status.h"
#include "llvmenv/baselines.h"
#include "llvmenv/module_state.h"
#include "worker/benchmark_cache.h"

namespace kiln::llvmsession {

class CachedModule {
 public:
  CachedModule(std::string key, llvmenv::SerializedModule module, std::int64_t instructionCount)
      : key_(std::move(key)), module_(std::move(module)), instructionCount_(instructionCount) {}

  const std::string& key() const { return key_; }
  const llvmenv::SerializedModule& module() const { return module_; }
  std::int64_t instructionCount() const { return instructionCount_; }
  std::uint64_t sizeInBytes() const { return module_.bitcode.size() + module_.irText.size(); }

  // The baselines, computed by `compute` on the first call only (later and
  // concurrent callers wait for and share that result, errors included).
  template <class Compute>
  Result<llvmenv::Baselines> baselines(Compute&& compute) const {
    std::lock_guard lock(baselinesMutex_);
    if (!baselines_) baselines_ = compute(module_);
    return *baselines_;
  }

 private:
  const std::string key_;
  const llvmenv::SerializedModule module_;
  const std::int64_t instructionCount_;
  mutable std::mutex baselinesMutex_;
  mutable std::optional<Result<llvmenv::Baselines>> baselines_;
};

class ParsedModuleCache {
 public:
  ParsedModuleCache(std::size_t maxSize = 256, std::uint64_t maxSizeInBytes = 128u << 20,
                    EvictionPolicy policy = EvictionPolicy::kLeastRecentlyUsed,
                    std::uint64_t randomSeed = 0xC0FFEE);

  // The entry of `key`, refreshing its recency; nullptr on a miss.
  std::shared_ptr<const CachedModule> get(const std::string& key);
  // Adds or replaces. An entry larger than the whole byte bound is not kept.
  void insert(std::shared_ptr<const CachedModule> entry);

  std::size_t size() const;
  std::uint64_t sizeInBytes() const;
  std::size_t maxSize() const;
  std::uint64_t maxSizeInBytes() const;
  // Changing a bound evicts down to it if needed.
  void setMaxSize(std::size_t entries);
  void setMaxSizeInBytes(std::uint64_t bytes);
  // Evicts until at most `targetBytes` are held.
  void evictToCapacity(std::uint64_t targetBytes);
  CacheCounters counters() const;

 private:
  using Order = std::list<std::shared_ptr<const CachedModule>>;  // front = most recent
  void evictLocked(std::size_t targetEntries, std::uint64_t targetBytes);

  mutable std::mutex mutex_;
  const EvictionPolicy policy_;
  std::size_t maxSize_;
  std::uint64_t maxSizeInBytes_;
  std::uint64_t sizeInBytes_ = 0;
  Order order_;
  std::unordered_map<std::string, Order::iterator> index_;
  std::mt19937_64 random_;
  CacheCounters counters_;
};

// Worker-level parameters service.parsed_module_cache.{get_counters,
// get_size, get_size_in_bytes, get_max_size, set_max_size,
// get_max_size_in_bytes, set_max_size_in_bytes, evict_to_capacity}.
// notFound for keys outside that prefix, so other handlers get their turn.
inline constexpr std::string_view kModuleCachePrefix = "service.parsed_module_cache.";
Result<std::string> handleModuleCacheParameter(ParsedModuleCache& cache, const std::string& key,
                                               const std::string& value);

}  // namespace kiln::llvmsession
