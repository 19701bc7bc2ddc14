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

// The physical limits of sharing. Each of K experiments alternates a
// collection that takes C on its dedicated machine and an update that takes
// U (elsewhere: learners do not run on the workers), a lull L = U / (C + U).
// On one host of K machines' CPU an experiment's collection C' is at least
// C / K (all of the host's CPU) and at least C - U (the K experiments'
// collections must fit the host's capacity over a cycle of U + C').
//
// The most the collection rate can gain, C / C': K when L >= 1/2, else
// min(K, (1 - L) / (1 - 2L)).
inline double idealCollectionGain(double lull, std::size_t experiments) {
  const double k = static_cast<double>(std::max<std::size_t>(experiments, 1));
  const double l = std::clamp(lull, 0.0, 1.0);
  if (l >= 0.5) return k;
  return std::min(k, (1 - l) / (1 - 2 * l));
}

// The most steps per wall second (updates included) can gain,
// (C + U) / (U + C'): below min(K, 1 / (1 - L)), the bound of the machines'
// utilization alone, because every update still takes U.
inline double idealWallGain(double lull, std::size_t experiments) {
  const double k = static_cast<double>(std::max<std::size_t>(experiments, 1));
  const double l = std::clamp(lull, 0.0, 1.0);
  if (l >= 1) return 1;
  return 1 / (l + (1 - l) * std::max(1 / k, (1 - 2 * l) / (1 - l)));
}

}  // namespace kiln
