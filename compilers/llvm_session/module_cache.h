// The LLVM worker's cache of parsed benchmarks: key (benchmark URI + hash of
// its bytes) -> the verified module in serialized form (bitcode + canonical
// text), its instruction count, and its baselines once computed. A
// BoundedCache (include/kiln/kit/bounded_cache.h): bounded in entries and bytes,
// thread-safe, entries shared with the sessions that use them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <kiln/kit/bounded_cache.h>
#include <kiln/kit/cache_parameters.h>
#include <kiln/status.h>
#include "compilers/llvm_engine/baselines.h"
#include "compilers/llvm_engine/module_state.h"

namespace kiln::llvm_session {

class CachedModule {
 public:
  CachedModule(std::string key, llvm_engine::SerializedModule module, std::int64_t instructionCount)
      : key_(std::move(key)), module_(std::move(module)), instructionCount_(instructionCount) {}

  const std::string& key() const { return key_; }
  const llvm_engine::SerializedModule& module() const { return module_; }
  std::int64_t instructionCount() const { return instructionCount_; }
  std::uint64_t sizeInBytes() const { return module_.bitcode.size() + module_.irText.size(); }

  // The baselines, computed by `compute` on the first call only (later and
  // concurrent callers wait for and share that result, errors included).
  template <class Compute>
  Result<llvm_engine::Baselines> baselines(Compute&& compute) const {
    std::lock_guard lock(baselinesMutex_);
    if (!baselines_) baselines_ = compute(module_);
    return *baselines_;
  }

 private:
  const std::string key_;
  const llvm_engine::SerializedModule module_;
  const std::int64_t instructionCount_;
  mutable std::mutex baselinesMutex_;
  mutable std::optional<Result<llvm_engine::Baselines>> baselines_;
};

using ParsedModuleCache = BoundedCache<CachedModule>;

// Worker-level parameters service.parsed_module_cache.{get_counters,
// get_size, get_size_in_bytes, get_max_size, set_max_size,
// get_max_size_in_bytes, set_max_size_in_bytes, evict_to_capacity}.
// notFound for keys outside that prefix, so other handlers get their turn.
inline constexpr std::string_view kModuleCachePrefix = "service.parsed_module_cache.";
Result<std::string> handleModuleCacheParameter(ParsedModuleCache& cache, const std::string& key,
                                               const std::string& value);

}  // namespace kiln::llvm_session
