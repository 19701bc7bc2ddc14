#include "worker/cache_parameters.h"

#include <fmt/format.h>

#include "common/parameter_value.h"

namespace kiln {

namespace {

constexpr std::string_view kPrefix = "service.benchmark_cache.";

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
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes,
                          parseUnsignedParameter(key, value, "a byte count (unsigned integer)"));
    cache.setMaxSizeInBytes(bytes);
    return std::to_string(cache.maxSizeInBytes());
  }
  if (name == "evict_to_capacity") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes,
                          parseUnsignedParameter(key, value, "a byte count (unsigned integer)"));
    cache.evictToCapacity(bytes);
    return std::to_string(cache.sizeInBytes());
  }
  return notFound(
      fmt::format("unknown parameter '{}' (known: get_max_size_in_bytes, set_max_size_in_bytes, "
                  "get_size_in_bytes, get_size, get_counters, evict_to_capacity)",
                  key));
}

}  // namespace kiln
