#include "worker/benchmark_cache.h"

#include <algorithm>
#include <iterator>

namespace kiln {

std::uint64_t evictionTarget(std::uint64_t bound, std::uint64_t incoming) {
  return std::min(bound / 2, bound - std::min(bound, incoming));
}

std::size_t victimPosition(EvictionPolicy policy, std::size_t entries, std::mt19937_64& random) {
  if (policy == EvictionPolicy::kRandom) {
    return static_cast<std::size_t>(random() % static_cast<std::uint64_t>(entries));
  }
  return entries - 1;
}

BenchmarkCache::BenchmarkCache(std::uint64_t maxSizeInBytes, EvictionPolicy policy,
                               std::uint64_t randomSeed)
    : policy_(policy), maxSizeInBytes_(maxSizeInBytes), random_(randomSeed) {}

std::shared_ptr<const std::string> BenchmarkCache::get(const std::string& uri) {
  std::lock_guard lock(mutex_);
  auto found = index_.find(uri);
  if (found == index_.end()) {
    ++counters_.misses;
    return nullptr;
  }
  ++counters_.hits;
  order_.splice(order_.begin(), order_, found->second);
  return found->second->program;
}

bool BenchmarkCache::contains(const std::string& uri) const {
  std::lock_guard lock(mutex_);
  return index_.count(uri) != 0;
}

void BenchmarkCache::insert(const std::string& uri, std::shared_ptr<const std::string> program) {
  std::lock_guard lock(mutex_);
  if (auto found = index_.find(uri); found != index_.end()) eraseLocked(found->second);
  std::uint64_t bytes = program ? program->size() : 0;
  if (bytes > maxSizeInBytes_) return;
  if (sizeInBytes_ + bytes > maxSizeInBytes_) evictLocked(evictionTarget(maxSizeInBytes_, bytes));
  order_.push_front({uri, std::move(program)});
  index_[uri] = order_.begin();
  sizeInBytes_ += bytes;
  ++counters_.inserts;
}

bool BenchmarkCache::erase(const std::string& uri) {
  std::lock_guard lock(mutex_);
  auto found = index_.find(uri);
  if (found == index_.end()) return false;
  eraseLocked(found->second);
  return true;
}

std::size_t BenchmarkCache::size() const {
  std::lock_guard lock(mutex_);
  return index_.size();
}

std::uint64_t BenchmarkCache::sizeInBytes() const {
  std::lock_guard lock(mutex_);
  return sizeInBytes_;
}

std::uint64_t BenchmarkCache::maxSizeInBytes() const {
  std::lock_guard lock(mutex_);
  return maxSizeInBytes_;
}

void BenchmarkCache::setMaxSizeInBytes(std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  maxSizeInBytes_ = bytes;
  if (sizeInBytes_ > maxSizeInBytes_) evictLocked(maxSizeInBytes_);
}

void BenchmarkCache::evictToCapacity(std::uint64_t targetBytes) {
  std::lock_guard lock(mutex_);
  evictLocked(targetBytes);
}

CacheCounters BenchmarkCache::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

void BenchmarkCache::evictLocked(std::uint64_t targetBytes) {
  while (sizeInBytes_ > targetBytes && !order_.empty()) {
    const std::size_t position = victimPosition(policy_, order_.size(), random_);
    // Walking from the nearer end keeps the usual LRU victim O(1).
    auto victim = position + 1 == order_.size()
                      ? std::prev(order_.end())
                      : std::next(order_.begin(), static_cast<long>(position));
    eraseLocked(victim);
    ++counters_.evictions;
  }
}

void BenchmarkCache::eraseLocked(Order::iterator it) {
  sizeInBytes_ -= it->program ? it->program->size() : 0;
  index_.erase(it->uri);
  order_.erase(it);
}

}  // namespace kiln
