#include "worker/cache_parameters.h"

#include <fmt/format.h>

#include <charconv>

namespace kiln {

namespace {

constexpr std::string_view kPrefix = "service.benchmark_cache.";

Result<std::uint64_t> parseBytes(const std::string& key, const std::string& value) {
  std::uint64_t bytes = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return invalidArgument(
        fmt::format("parameter '{}' wants a byte count (unsigned integer), got '{}'", key, value));
  }
  return bytes;
}

}  // namespace

Result<std::string> handleCacheParameter(BenchmarkCache& cache, const std::string& key,
                                         const std::string& value) {
  if (key.rfind(kPrefix, 0) != 0) {
    return notFound(fmt::format("unknown worker parameter '{}' (known: {}*)", key, kPrefix));
  }
  std::string name = key.substr(kPrefix.size());
  if (name == "get_max_size_in_bytes") return std::to_string(cache.maxSizeInBytes());
  if (name == "get_size_in_bytes") return std::to_string(cache.sizeInBytes());
  if (name == "get_size") return std::to_string(cache.size());
  if (name == "get_counters") {
    CacheCounters c = cache.counters();
    return fmt::format("hits={} misses={} evictions={} inserts={}", c.hits, c.misses, c.evictions,
                       c.inserts);
  }
  if (name == "set_max_size_in_bytes") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseBytes(key, value));
    cache.setMaxSizeInBytes(bytes);
    return std::to_string(cache.maxSizeInBytes());
  }
  if (name == "evict_to_capacity") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseBytes(key, value));
    cache.evictToCapacity(bytes);
    return std::to_string(cache.sizeInBytes());
  }
  return notFound(
      fmt::format("unknown parameter '{}' (known: get_max_size_in_bytes, set_max_size_in_bytes, "
                  "get_size_in_bytes, get_size, get_counters, evict_to_capacity)",
                  key));
}

}  // namespace kiln
