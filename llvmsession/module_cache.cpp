#include "llvmsession/module_cache.h"

#include <fmt/format.h>

#include <charconv>
#include <iterator>

namespace kiln::llvmsession {

ParsedModuleCache::ParsedModuleCache(std::size_t maxSize, std::uint64_t maxSizeInBytes,
                                     EvictionPolicy policy, std::uint64_t randomSeed)
    : policy_(policy), maxSize_(maxSize), maxSizeInBytes_(maxSizeInBytes), random_(randomSeed) {}

std::shared_ptr<const CachedModule> ParsedModuleCache::get(const std::string& key) {
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

void ParsedModuleCache::insert(std::shared_ptr<const CachedModule> entry) {
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

std::size_t ParsedModuleCache::size() const {
  std::lock_guard lock(mutex_);
  return order_.size();
}

std::uint64_t ParsedModuleCache::sizeInBytes() const {
  std::lock_guard lock(mutex_);
  return sizeInBytes_;
}

std::size_t ParsedModuleCache::maxSize() const {
  std::lock_guard lock(mutex_);
  return maxSize_;
}

std::uint64_t ParsedModuleCache::maxSizeInBytes() const {
  std::lock_guard lock(mutex_);
  return maxSizeInBytes_;
}

void ParsedModuleCache::setMaxSize(std::size_t entries) {
  std::lock_guard lock(mutex_);
  maxSize_ = entries;
  evictLocked(maxSize_, maxSizeInBytes_);
}

void ParsedModuleCache::setMaxSizeInBytes(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  maxSizeInBytes_ = bytes;
  evictLocked(maxSize_, maxSizeInBytes_);
}

void ParsedModuleCache::evictToCapacity(std::uint64_t targetBytes) {
  std::lock_guard lock(mutex_);
  evictLocked(maxSize_, targetBytes);
}

CacheCounters ParsedModuleCache::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void ParsedModuleCache::evictLocked(std::size_t targetEntries, std::uint64_t targetBytes) {
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

namespace {

Result<std::uint64_t> parseCount(const std::string& key, const std::string& value) {
  std::uint64_t count = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return invalidArgument(
        fmt::format("parameter '{}' wants an unsigned integer, got '{}'", key, value));
  }
  return count;
}

}  // namespace

Result<std::string> handleModuleCacheParameter(ParsedModuleCache& cache, const std::string& key,
                                               const std::string& value) {
  if (key.rfind(kModuleCachePrefix, 0) != 0) {
    return notFound(
        fmt::format("unknown worker parameter '{}' (known: {}*)", key, kModuleCachePrefix));
  }
  const std::string name = key.substr(kModuleCachePrefix.size());
  if (name == "get_size") return std::to_string(cache.size());
  if (name == "get_size_in_bytes") return std::to_string(cache.sizeInBytes());
  if (name == "get_max_size") return std::to_string(cache.maxSize());
  if (name == "get_max_size_in_bytes") return std::to_string(cache.maxSizeInBytes());
  if (name == "get_counters") {
    const CacheCounters c = cache.counters();
    return fmt::format("hits={} misses={} evictions={} inserts={}", c.hits, c.misses, c.evictions,
                       c.inserts);
  }
  if (name == "set_max_size") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t entries, parseCount(key, value));
    cache.setMaxSize(static_cast<std::size_t>(entries));
    return std::to_string(cache.maxSize());
  }
  if (name == "set_max_size_in_bytes") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseCount(key, value));
    cache.setMaxSizeInBytes(bytes);
    return std::to_string(cache.maxSizeInBytes());
  }
  if (name == "evict_to_capacity") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseCount(key, value));
    cache.evictToCapacity(bytes);
    return std::to_string(cache.sizeInBytes());
  }
  return notFound(fmt::format(
      "unknown parameter '{}' (known: get_counters, get_size, get_size_in_bytes, get_max_size, "
      "set_max_size, get_max_size_in_bytes, set_max_size_in_bytes, evict_to_capacity)",
      key));
}

}  // namespace kiln::llvmsession
