// The coordinator's metrics and dashboard over HTTP. The poll loop calls
// onTick(); throttled by the clock, it refreshes the metric atomics, samples
// the utilization timeline and publishes a rendered copy of the status; the
// endpoint's own thread serves /metrics, / and /dashboard (the page) and
// /api/status (that copy), so an HTTP client never blocks the loop.
#pragma once

#include <memory>
#include <string>

#include <kiln/clock.h>
#include <kiln/logging.h>
#include "common/metrics/http_endpoint.h"
#include "common/metrics/registry.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/dashboard.h"

namespace kiln {

class CoordinatorMetrics {
 public:
  static Result<std::unique_ptr<CoordinatorMetrics>> create(metrics::Registry& registry);
  // Loop thread: gauges from the tables, counters by what moved since last time.
  void update(const CoordinatorCore& core);

 private:
  CoordinatorMetrics() = default;
  metrics::Gauge* workers_ = nullptr;
  metrics::Gauge* hosts_ = nullptr;
  metrics::Gauge* experiments_ = nullptr;
  metrics::Gauge* slots_ = nullptr;
  metrics::Gauge* sessions_ = nullptr;
  metrics::Counter* placements_ = nullptr;
  metrics::Counter* affinityPlacements_ = nullptr;
  metrics::Counter* workersLost_ = nullptr;
  metrics::Family<metrics::Gauge>* hostUtilization_ = nullptr;
  metrics::Family<metrics::Gauge>* experimentUtilization_ = nullptr;
  metrics::Family<metrics::Gauge>* experimentWorkers_ = nullptr;
  std::uint64_t lastPlacements_ = 0;
  std::uint64_t lastAffinityPlacements_ = 0;
  std::uint64_t lastLost_ = 0;
  std::map<std::vector<std::string>, bool> hostSeries_;  // to zero the series of gone hosts
  std::map<std::string, bool> experimentSeries_;
};

class CoordinatorObservability {
 public:
  // `listen` is "ADDR:PORT" (port 0 = any free). Binds and starts serving.
  static Result<std::unique_ptr<CoordinatorObservability>> start(const std::string& listen,
                                                                 const Clock& clock, Logger logger);
  ~CoordinatorObservability();

  void onTick(const CoordinatorCore& core);
  int port() const { return endpoint_->port(); }
  // The JSON /api/status serves now (tests).
  std::shared_ptr<const std::string> status() const { return publisher_.latest(); }

 private:
  explicit CoordinatorObservability(const Clock& clock) : clock_(clock) {}
  const Clock& clock_;
  metrics::Registry registry_;
  std::unique_ptr<CoordinatorMetrics> metrics_;
  UtilizationTimeline timeline_;
  DashboardPublisher publisher_;
  std::unique_ptr<metrics::HttpEndpoint> endpoint_;
  TimePoint nextPublish_{};
  TimePoint nextSample_{};
};

}  // namespace kiln
