// The three ways experiments can share a cluster's slots, as the nesting
// bench and the demo compare them: one nesting host for all, dedicated
// workers for each, or one shared pool of plain workers.
#pragma once

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

}  // namespace kiln
