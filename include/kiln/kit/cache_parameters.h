// The worker-level session parameters that read and set a bounded cache at
// run time, one handler for every cache: `<prefix>{get_counters, get_size,
// get_size_in_bytes, get_max_size_in_bytes, set_max_size_in_bytes,
// evict_to_capacity}`, plus get_max_size and set_max_size for a cache bounded
// in entries too. The benchmark cache's are named as CompilerGym's
// (`service.benchmark_cache.*`).
#pragma once

#include <string>
#include <string_view>

#include <kiln/kit/benchmark_cache.h>
#include <kiln/kit/bounded_cache.h>
#include <kiln/status.h>

namespace kiln {

inline constexpr std::string_view kCacheParameterPrefix = "service.benchmark_cache.";

// Setters reply with the new bound (evict_to_capacity: the bytes now held).
// They come from clients, so they may lower a bound, or raise it back, but
// never above the one the cache was built with (the operator's, named by
// `boundSetBy`, e.g. "the operator's --cache-bytes"): permission denied.
// notFound for keys outside `prefix`, so other handlers get their turn, and
// for unknown keys inside it, listing the known ones.
Result<std::string> handleCacheParameter(CacheControls& cache, std::string_view prefix,
                                         const std::string& key, const std::string& value,
                                         std::string_view boundSetBy = "the worker at start-up");

// Whether `key` (under `prefix`) changes the cache: a setter or an eviction.
bool isCacheSetter(std::string_view prefix, std::string_view key);

// The benchmark cache's, under kCacheParameterPrefix.
Result<std::string> handleCacheParameter(BenchmarkCache& cache, const std::string& key,
                                         const std::string& value);

}  // namespace kiln
