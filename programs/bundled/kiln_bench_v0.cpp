#include "programs/bundled/kiln_bench_v0.h"

#include <algorithm>

namespace kiln::bundled {

const EmbeddedBenchmark* findKilnBenchV0(std::string_view name) {
  auto table = kilnBenchV0();
  auto it =
      std::lower_bound(table.begin(), table.end(), name,
                       [](const EmbeddedBenchmark& b, std::string_view n) { return b.name < n; });
  if (it == table.end() || it->name != name) return nullptr;
  return &*it;
}

}  // namespace kiln::bundled
