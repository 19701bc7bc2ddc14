// A point-in-time copy of a metrics Registry: plain values, no atomics, so the
// text exposition (exposition.h) is a pure function that tests can feed with
// hand-written snapshots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

struct SeriesSnapshot {
  std::vector<std::string> labelValues;  // same order as FamilySnapshot::labelNames
  double value = 0;                      // counters and gauges
  // Histograms: cumulative counts, one per bound plus a last one for +Inf
  // (which is therefore the observation count).
  std::vector<std::uint64_t> cumulativeCounts;
  double sum = 0;
};

struct FamilySnapshot {
  std::string name;
  std::string help;
  MetricType type = MetricType::kCounter;
  std::vector<std::string> labelNames;
  std::vector<double> bounds;  // histogram upper bounds, increasing, without +Inf
  std::vector<SeriesSnapshot> series;
};

}  // namespace kiln::metrics
