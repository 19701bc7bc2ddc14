#include <kiln/kit/cache_parameters.h>

#include <fmt/format.h>

#include <kiln/kit/operator_settings.h>
#include <kiln/parameter_value.h>

namespace kiln {

namespace {

constexpr std::string_view kByteCount = "a byte count (unsigned integer)";
constexpr std::string_view kEntryCount = "an entry count (unsigned integer)";

}  // namespace

Result<std::string> handleCacheParameter(CacheControls& cache, std::string_view prefix,
                                         const std::string& key, const std::string& value,
                                         std::string_view boundSetBy) {
  if (!key.starts_with(prefix)) {
    return notFound(fmt::format("unknown worker parameter '{}' (known: {}*)", key, prefix));
  }
  const std::string name = key.substr(prefix.size());
  // A cache bounded in bytes only does not pretend to have an entry bound.
  const bool entries = cache.boundsEntries();
  if (entries && name == "get_max_size") return std::to_string(cache.maxSize());
  if (name == "get_max_size_in_bytes") return std::to_string(cache.maxSizeInBytes());
  if (name == "get_size_in_bytes") return std::to_string(cache.sizeInBytes());
  if (name == "get_size") return std::to_string(cache.size());
  if (name == "get_counters") {
    const CacheCounters c = cache.counters();
    return fmt::format("hits={} misses={} evictions={} inserts={}", c.hits, c.misses, c.evictions,
                       c.inserts);
  }
  if (entries && name == "set_max_size") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t count, parseUnsignedParameter(key, value, kEntryCount));
    if (count > cache.operatorMaxSize()) {
      return aboveCeiling(key, count, cache.operatorMaxSize(), "entries", boundSetBy);
    }
    cache.setMaxSize(static_cast<std::size_t>(count));
    return std::to_string(cache.maxSize());
  }
  if (name == "set_max_size_in_bytes") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseUnsignedParameter(key, value, kByteCount));
    if (bytes > cache.operatorMaxSizeInBytes()) {
      return aboveCeiling(key, bytes, cache.operatorMaxSizeInBytes(), "bytes", boundSetBy);
    }
    cache.setMaxSizeInBytes(bytes);
    return std::to_string(cache.maxSizeInBytes());
  }
  if (name == "evict_to_capacity") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseUnsignedParameter(key, value, kByteCount));
    cache.evictToCapacity(bytes);
    return std::to_string(cache.sizeInBytes());
  }
  return notFound(
      fmt::format("unknown parameter '{}' (known: {}get_max_size_in_bytes, set_max_size_in_bytes, "
                  "get_size_in_bytes, get_size, get_counters, evict_to_capacity)",
                  key, entries ? "get_max_size, set_max_size, " : ""));
}

bool isCacheSetter(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) return false;
  std::string_view name = key.substr(prefix.size());
  return name == "set_max_size" || name == "set_max_size_in_bytes" || name == "evict_to_capacity";
}

Result<std::string> handleCacheParameter(BenchmarkCache& cache, const std::string& key,
                                         const std::string& value) {
  return handleCacheParameter(cache.controls(), kCacheParameterPrefix, key, value,
                              "the operator's --cache-bytes");
}

}  // namespace kiln
