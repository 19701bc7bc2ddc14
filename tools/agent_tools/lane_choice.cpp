#include "tools/agent_tools/lane_choice.h"

#include <algorithm>

namespace kiln::agent_tools {

std::ptrdiff_t longestCachedPrefix(const PrefixKeys& keys, const std::string& benchmark,
                                   const std::vector<std::int64_t>& passes) {
  PrefixKey key{benchmark, {}};
  std::ptrdiff_t longest = keys.contains(key) ? 0 : -1;
  for (std::size_t k = 0; k < passes.size(); ++k) {
    key.second.push_back(passes[k]);
    if (keys.contains(key)) longest = static_cast<std::ptrdiff_t>(k + 1);
  }
  return longest;
}

std::vector<std::size_t> laneOrder(const std::vector<std::ptrdiff_t>& cachedPrefix,
                                   std::size_t preferred) {
  const std::size_t slots = cachedPrefix.size();
  std::vector<std::size_t> order;
  order.reserve(slots);
  for (std::size_t i = 0; i < slots; ++i) order.push_back((preferred + i) % slots);
  // Stable: equal prefixes keep the rotation from the preferred slot.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cachedPrefix[a] > cachedPrefix[b]; });
  return order;
}

}  // namespace kiln::agent_tools
