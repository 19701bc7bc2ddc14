// The three ways experiments can share a cluster's slots, as the nesting
// bench and the demo compare them: one nesting host for all, dedicated
// workers for each, or one shared pool of plain workers.
#pragma once

#include <algorithm>
#include <cstddef>

namespace kiln {

enum class Layout { kNested, kDedicated, kShared };

inline const char* layoutName(Layout layout) {
  switch (layout) {
    case Layout::kNested:
      return "nested";
    case Layout::kDedicated:
      return "dedicated";
    case Layout::kShared:
      return "shared";
  }
  return "?";
}

// The physical limit of sharing: K experiments that each leave their
// machine idle a fraction `lull` of the time (training, not collecting)
// can together collect at most min(K, 1 / (1 - lull)) times what one
// experiment collects on its own dedicated machine. Dedicated machines
// lose the lull; one host of the same size fills it with the other
// experiments' work, until every experiment collects without pause.
inline double idealSharingGain(double lull, std::size_t experiments) {
  const double k = static_cast<double>(std::max<std::size_t>(experiments, 1));
  if (lull >= 1) return k;
  return std::min(k, 1 / (1 - std::max(lull, 0.0)));
}

}  // namespace kiln
