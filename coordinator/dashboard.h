// The coordinator's live dashboard: the figures the page shows, built as
// plain values from the coordinator's tables on its loop thread and rendered
// to the JSON that GET /api/status answers (pure functions); a timeline of
// each experiment's share of each host's slots, sampled once a second; the
// mutex-guarded latest copy that HTTP threads read; and the page itself.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "coordinator/experiments.h"

namespace kiln {

struct DashboardHost {
  std::uint64_t id = 0;
  bool nesting = false;
  std::string endpoint;
  std::string hostname;
  std::uint32_t slots = 0;
  std::uint32_t busy = 0;
  std::uint32_t sessions = 0;
  double utilization1m = 0;  // mean of the last minute's samples, as `kiln status` shows
};

struct DashboardExperiment {
  std::string name;
  std::uint32_t requested = 0;  // workers asked for
  std::uint32_t ready = 0;
  std::uint32_t weight = 1;
  std::uint32_t sessions = 0;
  double utilization1m = 0;
};

// One experiment on one host: its busy share of the host's slots, oldest first.
struct DashboardSeries {
  std::string experiment;
  std::uint64_t host = 0;
  std::vector<float> samples;
};

struct DashboardModel {
  std::vector<DashboardHost> hosts;
  std::vector<DashboardExperiment> experiments;
  std::vector<DashboardSeries> timeline;
  double sampleSeconds = 1;
};

// Per (experiment, host) rings of busy share, one sample per call.
class UtilizationTimeline {
 public:
  explicit UtilizationTimeline(std::size_t window = 60) : window_(window) {}
  // Samples every pair where the host runs a worker of the experiment; pairs
  // whose host or experiment is gone are dropped.
  void sample(const HostTable& hosts, const ExperimentBook& experiments);
  using Key = std::pair<std::string, std::uint64_t>;  // experiment, host id
  const std::map<Key, SampleRing>& series() const { return series_; }

 private:
  std::size_t window_;
  std::map<Key, SampleRing> series_;
};

DashboardModel buildDashboardModel(const HostTable& hosts, const ExperimentBook& experiments,
                                   const UtilizationTimeline& timeline, double sampleSeconds);
// {"totals": {...}, "hosts": [...], "experiments": [...], "timeline": [...]}
std::string renderDashboardJson(const DashboardModel& model);

// The latest rendered status: the loop publishes, HTTP threads read. A
// shared_ptr swap keeps the lock to a pointer copy on both sides.
class DashboardPublisher {
 public:
  void publish(std::string json);
  std::shared_ptr<const std::string> latest() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> latest_ = std::make_shared<const std::string>("{}");
};

// The self-contained HTML page (no external scripts: hosts may be offline).
std::string_view dashboardPage();

}  // namespace kiln
