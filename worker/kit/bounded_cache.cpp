#include <kiln/kit/bounded_cache.h>

#include <algorithm>

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

}  // namespace kiln
