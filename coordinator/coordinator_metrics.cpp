#include "coordinator/coordinator_metrics.h"

#include <fmt/format.h>

#include <numeric>

#include "common/metrics/listen_address.h"

namespace kiln {

namespace {

constexpr Duration kPublishEvery = std::chrono::milliseconds(250);
constexpr Duration kSampleEvery = std::chrono::seconds(1);

template <class Metric>
Result<Metric*> single(Result<metrics::Family<Metric>*> family) {
  if (!family.ok()) return family.status();
  return (*family)->withLabels({});
}

// Zeroes the series whose subject disappeared since the last update, so a
// lost host does not keep reporting its last utilization.
template <class Key, class Zero>
void forgetUnseen(std::map<Key, bool>& seen, Zero zero) {
  for (auto it = seen.begin(); it != seen.end();) {
    if (it->second) {
      it->second = false;
      ++it;
    } else {
      zero(it->first);
      it = seen.erase(it);
    }
  }
}

}  // namespace

Result<std::unique_ptr<CoordinatorMetrics>> CoordinatorMetrics::create(
    metrics::Registry& registry) {
  std::unique_ptr<CoordinatorMetrics> m(new CoordinatorMetrics());
  KILN_ASSIGN_OR_RETURN(
      m->workers_, single(registry.gauge("kiln_coordinator_workers", "Registered plain workers")));
  KILN_ASSIGN_OR_RETURN(
      m->hosts_, single(registry.gauge("kiln_coordinator_hosts", "Registered nesting hosts")));
  KILN_ASSIGN_OR_RETURN(m->experiments_,
                        single(registry.gauge("kiln_coordinator_experiments", "Open experiments")));
  KILN_ASSIGN_OR_RETURN(m->slots_, single(registry.gauge("kiln_coordinator_slots",
                                                         "Slots of all workers and hosts")));
  KILN_ASSIGN_OR_RETURN(m->sessions_,
                        single(registry.gauge("kiln_coordinator_live_sessions",
                                              "Live sessions as the workers last reported")));
  KILN_ASSIGN_OR_RETURN(m->placements_, single(registry.counter("kiln_coordinator_placements_total",
                                                                "Sessions placed")));
  KILN_ASSIGN_OR_RETURN(
      m->affinityPlacements_,
      single(registry.counter("kiln_coordinator_affinity_placements_total",
                              "Sessions placed on a worker that ran their benchmark lately")));
  KILN_ASSIGN_OR_RETURN(m->workersLost_,
                        single(registry.counter("kiln_coordinator_workers_lost_total",
                                                "Workers and hosts declared lost (silent)")));
  KILN_ASSIGN_OR_RETURN(m->hostUtilization_,
                        registry.gauge("kiln_coordinator_host_utilization",
                                       "Busy slots / slots of a worker or host at its last report",
                                       {"worker", "endpoint", "kind"}));
  KILN_ASSIGN_OR_RETURN(
      m->experimentUtilization_,
      registry.gauge("kiln_coordinator_experiment_utilization",
                     "Busy share of an experiment's hosts' slots, last sample", {"experiment"}));
  KILN_ASSIGN_OR_RETURN(
      m->experimentWorkers_,
      registry.gauge("kiln_coordinator_experiment_ready_workers",
                     "Ready underlying workers of an experiment", {"experiment"}));
  return m;
}

void CoordinatorMetrics::update(const CoordinatorCore& core) {
  std::uint32_t workers = 0, hosts = 0, slots = 0, sessions = 0;
  for (const auto& [id, record] : core.workers()) {
    (record.nesting ? hosts : workers) += 1;
    slots += record.snapshot.slots;
    sessions += record.snapshot.liveSessions;
    std::vector<std::string> labels{std::to_string(id.value), record.endpoint,
                                    record.nesting ? "nest" : "worker"};
    auto gauge = hostUtilization_->withLabels(labels);
    if (!gauge.ok()) continue;  // over the series bound: keep the totals right
    const auto& samples = record.utilization.samples();
    (*gauge)->set(samples.empty() ? 0.0 : samples.back());
    hostSeries_[labels] = true;
  }
  forgetUnseen(hostSeries_, [this](const std::vector<std::string>& labels) {
    if (auto g = hostUtilization_->withLabels(labels); g.ok()) (*g)->set(0);
  });
  workers_->set(workers);
  hosts_->set(hosts);
  slots_->set(slots);
  sessions_->set(sessions);

  const auto& experiments = core.experiments().experiments();
  experiments_->set(static_cast<double>(experiments.size()));
  for (const auto& [name, record] : experiments) {
    const auto& samples = record.utilization.samples();
    if (auto g = experimentUtilization_->withLabels({name}); g.ok()) {
      (*g)->set(samples.empty() ? 0.0 : samples.back());
    }
    std::uint32_t ready = 0;
    for (const auto& [workerId, worker] : record.workers) ready += worker.ready ? 1 : 0;
    if (auto g = experimentWorkers_->withLabels({name}); g.ok()) (*g)->set(ready);
    experimentSeries_[name] = true;
  }
  forgetUnseen(experimentSeries_, [this](const std::string& name) {
    for (auto* family : {experimentUtilization_, experimentWorkers_}) {
      if (auto g = family->withLabels({name}); g.ok()) (*g)->set(0);
    }
  });

  // The core counts; the counters take what it counted since the last tick.
  auto advance = [](metrics::Counter* counter, std::uint64_t total, std::uint64_t& last) {
    if (total > last) counter->increment(static_cast<double>(total - last));
    last = total;
  };
  advance(placements_, core.placements(), lastPlacements_);
  advance(affinityPlacements_, core.affinityPlacements(), lastAffinityPlacements_);
  advance(workersLost_, core.workersLost(), lastLost_);
}

Result<std::unique_ptr<CoordinatorObservability>> CoordinatorObservability::start(
    const std::string& listen, const Clock& clock, Logger logger) {
  KILN_ASSIGN_OR_RETURN(metrics::ListenAddress address, metrics::parseListenAddress(listen));
  std::unique_ptr<CoordinatorObservability> o(new CoordinatorObservability(clock));
  KILN_ASSIGN_OR_RETURN(o->metrics_, CoordinatorMetrics::create(o->registry_));
  metrics::HttpEndpointOptions options;
  options.host = address.host;
  options.port = address.port;
  KILN_ASSIGN_OR_RETURN(o->endpoint_, metrics::HttpEndpoint::create(options, o->registry_, logger));
  auto page = [](const metrics::HttpRequest&) {
    return metrics::HttpResponse{200, "text/html; charset=utf-8", std::string(dashboardPage())};
  };
  KILN_RETURN_IF_ERROR(o->endpoint_->addRoute("/", page));
  KILN_RETURN_IF_ERROR(o->endpoint_->addRoute("/dashboard", page));
  DashboardPublisher* publisher = &o->publisher_;
  KILN_RETURN_IF_ERROR(
      o->endpoint_->addRoute("/api/status", [publisher](const metrics::HttpRequest&) {
        return metrics::HttpResponse{200, "application/json", *publisher->latest()};
      }));
  KILN_ASSIGN_OR_RETURN(int port, o->endpoint_->start());
  if (!metrics::isLoopbackHost(address.host)) {
    logger->warn("metrics and dashboard served beyond loopback on {}:{} without authentication",
                 address.host, port);
  }
  logger->info("metrics on http://{}:{}/metrics, dashboard on http://{}:{}/", address.host, port,
               address.host, port);
  return o;
}

CoordinatorObservability::~CoordinatorObservability() {
  if (endpoint_) endpoint_->stop();  // before the publisher its handlers read
}

void CoordinatorObservability::onTick(const CoordinatorCore& core) {
  TimePoint now = clock_.now();
  if (now >= nextSample_) {
    nextSample_ = now + kSampleEvery;
    timeline_.sample(core.workers(), core.experiments());
  }
  if (now < nextPublish_) return;
  nextPublish_ = now + kPublishEvery;
  metrics_->update(core);
  double sampleSeconds = std::chrono::duration<double>(kSampleEvery).count();
  publisher_.publish(renderDashboardJson(
      buildDashboardModel(core.workers(), core.experiments(), timeline_, sampleSeconds)));
}

}  // namespace kiln
