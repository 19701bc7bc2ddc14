#include <kiln/kit/benchmark_cache.h>

#include <fmt/format.h>

namespace kiln {

std::shared_ptr<const std::string> BenchmarkCache::get(const std::string& uri) {
  std::shared_ptr<const CachedProgram> entry = BoundedCache::get(uri);
  return entry ? entry->program : nullptr;
}

void BenchmarkCache::insert(const std::string& uri, std::shared_ptr<const std::string> program) {
  BoundedCache::insert(
      std::make_shared<const CachedProgram>(CachedProgram{uri, std::move(program)}));
}

std::string privateCacheKey(ClientId client, const std::string& uri) {
  return fmt::format("{}client {:016x} {}", '\0', client.value, uri);
}

}  // namespace kiln
