// Which of a caller's lanes a stateless call goes to (policy; the executor
// tries the lanes in this order and takes the first free one). Each lane
// keeps its own prefix cache (prefix_cache.h), so a call on a lane without
// its prefix starts that prefix again: concurrent rollouts on one benchmark
// would spread over lanes at random and rarely find their own last state.
// The lane holding the longest cached prefix of the call's (benchmark, pass
// list) comes first; lanes holding none follow, from the benchmark's
// preferred slot on (different benchmarks start on different lanes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::agent_tools {

using PrefixKey = std::pair<std::string, std::vector<std::int64_t>>;
using PrefixKeys = std::set<PrefixKey>;

// The length of the longest prefix of `passes` (the empty one included)
// that `keys` holds for `benchmark`; -1 when it holds none.
std::ptrdiff_t longestCachedPrefix(const PrefixKeys& keys, const std::string& benchmark,
                                   const std::vector<std::int64_t>& passes);

// The order to try lanes in, given each lane's longestCachedPrefix (-1:
// none) and the benchmark's preferred slot: longer prefixes first; among
// equal ones, slots from `preferred` on, wrapping around.
std::vector<std::size_t> laneOrder(const std::vector<std::ptrdiff_t>& cachedPrefix,
                                   std::size_t preferred);

}  // namespace kiln::agent_tools
