#include "runtime/timing.h"

#include <algorithm>
#include <cstddef>

namespace kiln::runtime {

double median(std::vector<double> times) {
  if (times.empty()) return 0;
  const auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), middle, times.end());
  if (times.size() % 2 == 1) return *middle;
  return (*middle + *std::max_element(times.begin(), middle)) / 2;
}

double speedup(const std::vector<double>& baseline, const std::vector<double>& times) {
  const double now = median(times);
  return now > 0 ? median(baseline) / now : 0;
}

}  // namespace kiln::runtime
