#include "worker/benchmark_cache.h"

namespace kiln {

std::shared_ptr<const std::string> BenchmarkCache::get(const std::string& uri) {
  std::shared_ptr<const CachedProgram> entry = BoundedCache::get(uri);
  return entry ? entry->program : nullptr;
}

void BenchmarkCache::insert(const std::string& uri, std::shared_ptr<const std::string> program) {
  BoundedCache::insert(
      std::make_shared<const CachedProgram>(CachedProgram{uri, std::move(program)}));
}

}  // namespace kiln
