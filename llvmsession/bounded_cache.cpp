#include "llvmsession/bounded_cache.h"

#include <fmt/format.h>

#include "common/parameter_value.h"

namespace kiln::llvmsession::detail {

Result<std::string> handleCacheParameter(
    std::string_view prefix, const std::string& key, const std::string& value,
    const std::function<CacheControl()>& read,
    const std::function<void(std::string_view setter, std::uint64_t count)>& apply) {
  if (key.rfind(prefix, 0) != 0) {
    return notFound(fmt::format("unknown worker parameter '{}' (known: {}*)", key, prefix));
  }
  const std::string name = key.substr(prefix.size());
  if (name == "get_size") return std::to_string(read().size);
  if (name == "get_size_in_bytes") return std::to_string(read().sizeInBytes);
  if (name == "get_max_size") return std::to_string(read().maxSize);
  if (name == "get_max_size_in_bytes") return std::to_string(read().maxSizeInBytes);
  if (name == "get_counters") {
    const CacheCounters c = read().counters;
    return fmt::format("hits={} misses={} evictions={} inserts={}", c.hits, c.misses, c.evictions,
                       c.inserts);
  }
  if (name == "set_max_size" || name == "set_max_size_in_bytes" || name == "evict_to_capacity") {
    KILN_ASSIGN_OR_RETURN(std::uint64_t count,
                          parseUnsignedParameter(key, value, "an unsigned integer"));
    apply(name, count);
    const CacheControl now = read();
    if (name == "set_max_size") return std::to_string(now.maxSize);
    if (name == "set_max_size_in_bytes") return std::to_string(now.maxSizeInBytes);
    return std::to_string(now.sizeInBytes);
  }
  return notFound(fmt::format(
      "unknown parameter '{}' (known: get_counters, get_size, get_size_in_bytes, get_max_size, "
      "set_max_size, get_max_size_in_bytes, set_max_size_in_bytes, evict_to_capacity)",
      key));
}

}  // namespace kiln::llvmsession::detail
