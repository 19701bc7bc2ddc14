// Summaries of a program's wall times (policy): what Runtime's samples say.
#pragma once

#include <vector>

namespace kiln::runtime {

// The median of `times` (0 for none).
double median(std::vector<double> times);

// How many times faster `times` runs than `baseline`: median(baseline) /
// median(times) (0 when `times` has no positive median).
double speedup(const std::vector<double>& baseline, const std::vector<double>& times);

}  // namespace kiln::runtime
