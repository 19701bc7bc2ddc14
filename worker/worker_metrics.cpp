#include "worker/worker_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/metrics/listen_address.h"

namespace kiln {

namespace {

constexpr Duration kRateWindow = std::chrono::seconds(1);
constexpr Duration kUpdateEvery = std::chrono::milliseconds(250);

// "invalid argument" -> "invalid_argument": label values that need no quoting
// in PromQL selectors.
std::string kindLabel(ErrorCode code) {
  std::string kind(errorCodeName(code));
  std::replace(kind.begin(), kind.end(), ' ', '_');
  return kind;
}

template <class Metric>
Result<Metric*> single(Result<metrics::Family<Metric>*> family) {
  if (!family.ok()) return family.status();
  return (*family)->withLabels({});
}

// Counters kept elsewhere as running totals move by their increase; a total
// that went down (a restart of its owner) is taken as the new base.
void advance(metrics::Counter& counter, std::uint64_t now, std::uint64_t before) {
  if (now > before) counter.increment(static_cast<double>(now - before));
}

}  // namespace

Result<std::unique_ptr<WorkerMetrics>> WorkerMetrics::create(metrics::Registry& registry,
                                                             const Clock& clock) {
  std::unique_ptr<WorkerMetrics> m(new WorkerMetrics(registry, clock));
  KILN_ASSIGN_OR_RETURN(auto bounds, metrics::exponentialBuckets(1e-6, 4, 12));
  KILN_ASSIGN_OR_RETURN(m->stepSeconds_,
                        registry.histogram("kiln_step_seconds",
                                           "Time a step request ran on this host (compile work, "
                                           "without queueing), by session type",
                                           bounds, {"session_type"}));
  KILN_ASSIGN_OR_RETURN(
      m->queueDepth_,
      registry.gauge("kiln_queue_depth", "Requests waiting behind a busy session, by experiment",
                     {"experiment"}));
  KILN_ASSIGN_OR_RETURN(m->experimentBusy_,
                        registry.gauge("kiln_experiment_busy_slots",
                                       "Slots running an experiment's work now", {"experiment"}));
  KILN_ASSIGN_OR_RETURN(
      m->experimentSessions_,
      registry.gauge("kiln_experiment_sessions", "Live sessions of an experiment on this host",
                     {"experiment"}));
  KILN_ASSIGN_OR_RETURN(
      m->steps_,
      single(registry.counter("kiln_steps_total", "Steps applied by this host's sessions")));
  KILN_ASSIGN_OR_RETURN(m->stepsPerSecond_,
                        single(registry.gauge("kiln_steps_per_second",
                                              "Steps per second over the last second or more")));
  KILN_ASSIGN_OR_RETURN(m->liveSessions_, single(registry.gauge("kiln_live_sessions",
                                                                "Sessions alive on this host")));
  KILN_ASSIGN_OR_RETURN(m->busySlots_,
                        single(registry.gauge("kiln_busy_slots", "Slots running a request now")));
  KILN_ASSIGN_OR_RETURN(m->slots_, single(registry.gauge("kiln_slots", "Slots of this host")));
  KILN_ASSIGN_OR_RETURN(m->utilization_,
                        single(registry.gauge("kiln_utilization", "Busy slots / slots (0..1)")));
  KILN_ASSIGN_OR_RETURN(
      m->underlying_,
      single(registry.gauge("kiln_underlying_workers",
                            "Underlying workers of experiments on this nesting host")));
  KILN_ASSIGN_OR_RETURN(m->cacheHits_, single(registry.counter("kiln_benchmark_cache_hits_total",
                                                               "Benchmark cache lookups found")));
  KILN_ASSIGN_OR_RETURN(m->cacheMisses_,
                        single(registry.counter("kiln_benchmark_cache_misses_total",
                                                "Benchmark cache lookups not found")));
  KILN_ASSIGN_OR_RETURN(m->cacheEvictions_,
                        single(registry.counter("kiln_benchmark_cache_evictions_total",
                                                "Benchmarks evicted to stay within the bound")));
  KILN_ASSIGN_OR_RETURN(m->restarts_,
                        single(registry.counter("kiln_restarts_total",
                                                "Re-registrations with the coordinator (after a "
                                                "lost link or a coordinator restart)")));
  KILN_ASSIGN_OR_RETURN(
      auto errors, registry.counter("kiln_errors_total", "Error replies sent, by kind", {"kind"}));
  for (std::size_t code = 1; code < m->errors_.size(); ++code) {
    KILN_ASSIGN_OR_RETURN(m->errors_[code],
                          errors->withLabels({kindLabel(static_cast<ErrorCode>(code))}));
  }
  return m;
}

void WorkerMetrics::onSteps(const std::string& sessionType, Duration ran, std::uint64_t steps) {
  steps_->increment(static_cast<double>(steps));
  // Session type names come from the registry, not from requests, so the
  // number of series is bounded by the types this process hosts.
  auto histogram = stepSeconds_->withLabels({sessionType});
  if (histogram.ok()) (*histogram)->observe(std::chrono::duration<double>(ran).count());
}

void WorkerMetrics::onError(ErrorCode code) {
  auto index = static_cast<std::size_t>(code);
  if (index == 0 || index >= errors_.size() || errors_[index] == nullptr) return;
  errors_[index]->increment();
}

void WorkerMetrics::update(const WorkerLoadSample& sample) {
  const LoadFigures& total = sample.load.total;
  liveSessions_->set(total.liveSessions);
  busySlots_->set(total.busySlots);
  slots_->set(sample.slots);
  utilization_->set(static_cast<double>(total.busySlots) / std::max(1u, sample.slots));
  underlying_->set(static_cast<double>(sample.load.underlying.size()));

  // Per experiment: a plain worker reports everything under "" (no experiment).
  std::map<std::string, LoadFigures> byExperiment;
  if (sample.load.underlying.empty()) {
    byExperiment[""] = total;
  } else {
    for (const UnderlyingStatus& status : sample.load.underlying) {
      LoadFigures& sum = byExperiment[status.spec.experiment];
      sum.queuedRequests += status.load.queuedRequests;
      sum.busySlots += status.load.busySlots;
      sum.liveSessions += status.load.liveSessions;
    }
  }
  for (auto& [name, seen] : experimentsSeen_) seen = false;
  for (const auto& [name, figures] : byExperiment) {
    // Experiment names are bounded by the registry's series limit; a failed
    // lookup only loses that experiment's gauges.
    if (auto g = queueDepth_->withLabels({name}); g.ok()) (*g)->set(figures.queuedRequests);
    if (auto g = experimentBusy_->withLabels({name}); g.ok()) (*g)->set(figures.busySlots);
    if (auto g = experimentSessions_->withLabels({name}); g.ok()) (*g)->set(figures.liveSessions);
    experimentsSeen_[name] = true;
  }
  // Experiments gone from this host read zero rather than their last value.
  for (auto it = experimentsSeen_.begin(); it != experimentsSeen_.end();) {
    if (it->second) {
      ++it;
      continue;
    }
    for (auto* family : {queueDepth_, experimentBusy_, experimentSessions_}) {
      if (auto g = family->withLabels({it->first}); g.ok()) (*g)->set(0);
    }
    it = experimentsSeen_.erase(it);
  }

  advance(*cacheHits_, sample.cache.hits, lastCache_.hits);
  advance(*cacheMisses_, sample.cache.misses, lastCache_.misses);
  advance(*cacheEvictions_, sample.cache.evictions, lastCache_.evictions);
  lastCache_ = sample.cache;
  if (sample.registrations > 1 && sample.registrations > lastRegistrations_) {
    restarts_->increment(sample.registrations - std::max(lastRegistrations_, 1));
  }
  lastRegistrations_ = std::max(lastRegistrations_, sample.registrations);

  TimePoint now = clock_.now();
  if (!rateStarted_) {
    rateStarted_ = true;
    rateBaseTime_ = now;
    rateBaseSteps_ = steps_->value();
  } else if (now - rateBaseTime_ >= kRateWindow) {
    double seconds = std::chrono::duration<double>(now - rateBaseTime_).count();
    stepsPerSecond_->set((steps_->value() - rateBaseSteps_) / seconds);
    rateBaseTime_ = now;
    rateBaseSteps_ = steps_->value();
  }
}

Result<std::unique_ptr<WorkerObservability>> WorkerObservability::start(const std::string& listen,
                                                                        const Clock& clock,
                                                                        Logger logger) {
  KILN_ASSIGN_OR_RETURN(metrics::ListenAddress address, metrics::parseListenAddress(listen));
  std::unique_ptr<WorkerObservability> o(new WorkerObservability(clock));
  KILN_ASSIGN_OR_RETURN(o->metrics_, WorkerMetrics::create(o->registry_, clock));
  metrics::HttpEndpointOptions options;
  options.host = address.host;
  options.port = address.port;
  KILN_ASSIGN_OR_RETURN(o->endpoint_, metrics::HttpEndpoint::create(options, o->registry_, logger));
  KILN_ASSIGN_OR_RETURN(int port, o->endpoint_->start());
  if (!metrics::isLoopbackHost(address.host)) {
    logger->warn("metrics served beyond loopback on {}:{} without authentication", address.host,
                 port);
  }
  logger->info("metrics on http://{}:{}/metrics", address.host, port);
  return o;
}

WorkerObservability::~WorkerObservability() {
  if (endpoint_) endpoint_->stop();
}

bool WorkerObservability::due() {
  TimePoint now = clock_.now();
  if (now < nextUpdate_) return false;
  nextUpdate_ = now + kUpdateEvery;
  return true;
}

}  // namespace kiln
