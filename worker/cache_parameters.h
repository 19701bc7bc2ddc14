// The worker-level session parameters that read and set the benchmark cache
// at run time, named as CompilerGym's (`service.benchmark_cache.*`).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "worker/benchmark_cache.h"

namespace kiln {

inline constexpr std::string_view kCacheParameterPrefix = "service.benchmark_cache.";

// Keys: service.benchmark_cache.{get,set}_max_size_in_bytes,
// get_size_in_bytes, get_size, get_counters, evict_to_capacity.
// Unknown keys give not-found listing the known ones.
Result<std::string> handleCacheParameter(BenchmarkCache& cache, const std::string& key,
                                         const std::string& value);

}  // namespace kiln
