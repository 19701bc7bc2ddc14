// A worker's or nesting host's metrics: the SessionObserver hooks that the
// session hosts call (step latency per session type, errors by kind) and the
// gauges refreshed from the poll loop's load report (sessions, utilization,
// queue depth per experiment, cache, restarts). The loop writes atomics only;
// the HTTP endpoint, on its own thread, reads them when scraped.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>

#include <kiln/clock.h>
#include <kiln/kit/benchmark_cache.h>
#include "common/metrics/http_endpoint.h"
#include "common/metrics/registry.h"
#include "worker/coordinator_link.h"
#include "worker/session_host.h"

namespace kiln {

// What the loop hands over after a poll: plain figures, no sockets.
struct WorkerLoadSample {
  LoadReport load;
  unsigned slots = 1;
  CacheCounters cache;
  int registrations = 0;  // with the coordinator, including the first
};

class WorkerMetrics final : public SessionObserver {
 public:
  // Registers kiln's worker families in `registry` (which must outlive this).
  static Result<std::unique_ptr<WorkerMetrics>> create(metrics::Registry& registry,
                                                       const Clock& clock);

  void onSteps(const std::string& sessionType, Duration ran, std::uint64_t steps) override;
  void onError(ErrorCode code) override;
  // Refreshes the gauges and moves the counters kept by others (cache,
  // registrations) by what changed since the last call.
  void update(const WorkerLoadSample& sample);

  double stepsPerSecond() const { return stepsPerSecond_->value(); }

 private:
  WorkerMetrics(metrics::Registry& registry, const Clock& clock)
      : registry_(registry), clock_(clock) {}

  metrics::Registry& registry_;
  const Clock& clock_;
  metrics::Family<metrics::Histogram>* stepSeconds_ = nullptr;
  metrics::Family<metrics::Gauge>* queueDepth_ = nullptr;
  metrics::Family<metrics::Gauge>* experimentBusy_ = nullptr;
  metrics::Family<metrics::Gauge>* experimentSessions_ = nullptr;
  metrics::Counter* steps_ = nullptr;
  metrics::Gauge* stepsPerSecond_ = nullptr;
  metrics::Gauge* liveSessions_ = nullptr;
  metrics::Gauge* busySlots_ = nullptr;
  metrics::Gauge* slots_ = nullptr;
  metrics::Gauge* utilization_ = nullptr;
  metrics::Gauge* underlying_ = nullptr;
  metrics::Counter* cacheHits_ = nullptr;
  metrics::Counter* cacheMisses_ = nullptr;
  metrics::Counter* cacheEvictions_ = nullptr;
  metrics::Counter* restarts_ = nullptr;
  // One series per code, made up front so that counting never locks.
  std::array<metrics::Counter*, 10> errors_{};
  // Loop-thread state for rates and deltas.
  CacheCounters lastCache_;
  int lastRegistrations_ = 0;
  double rateBaseSteps_ = 0;
  TimePoint rateBaseTime_{};
  bool rateStarted_ = false;
  std::map<std::string, bool> experimentsSeen_;
};

// The metrics of one worker process served over HTTP: the registry, the
// hooks, and the endpoint thread. Built only when --metrics-listen is given.
class WorkerObservability {
 public:
  // `listen` is "ADDR:PORT" (port 0 = any free). Binds and starts serving.
  static Result<std::unique_ptr<WorkerObservability>> start(const std::string& listen,
                                                            const Clock& clock, Logger logger);
  ~WorkerObservability();

  SessionObserver* observer() { return metrics_.get(); }
  WorkerMetrics& metrics() { return *metrics_; }
  // True at most every 250 ms: the loop may spin much faster than anyone
  // scrapes, so it builds a WorkerLoadSample only when this says so.
  bool due();
  int port() const { return endpoint_->port(); }

 private:
  WorkerObservability(const Clock& clock) : clock_(clock) {}
  const Clock& clock_;
  metrics::Registry registry_;
  std::unique_ptr<WorkerMetrics> metrics_;
  std::unique_ptr<metrics::HttpEndpoint> endpoint_;
  TimePoint nextUpdate_{};
};

}  // namespace kiln
