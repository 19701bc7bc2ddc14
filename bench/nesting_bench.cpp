#include "bench/nesting_bench.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <thread>

#include "local/local_cluster.h"

namespace kiln::bench {
namespace {

using SteadyTime = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct ExperimentFigures {
  std::vector<double> phaseSeconds;
  std::uint64_t steps = 0;
  Status status;
};

struct LayoutFigures {
  std::vector<ExperimentFigures> experiments;
  double wallSeconds = 0;
  double cpuUtilization = 0;  // of the whole machine, by this process
};

double cpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](timeval t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// All of `sessions` stepping with one step in flight each until `steps` ran.
Status collect(std::vector<std::unique_ptr<client::Session>>& sessions, unsigned steps) {
  std::vector<Value> actions{Value(std::int64_t{1})};
  std::vector<std::uint32_t> none;
  std::vector<std::optional<std::uint64_t>> pending(sessions.size());
  unsigned issued = 0, done = 0;
  auto issue = [&](std::size_t s) -> Status {
    if (issued >= steps) return okStatus();
    KILN_ASSIGN_OR_RETURN(pending[s], sessions[s]->sendStep(actions, none));
    ++issued;
    return okStatus();
  };
  for (std::size_t s = 0; s < sessions.size(); ++s) KILN_RETURN_IF_ERROR(issue(s));
  while (done < steps) {
    for (std::size_t s = 0; s < sessions.size() && done < steps; ++s) {
      if (!pending[s]) continue;
      KILN_RETURN_IF_ERROR(sessions[s]->awaitStep(*pending[s]).status());
      pending[s].reset();
      ++done;
      KILN_RETURN_IF_ERROR(issue(s));
    }
  }
  return okStatus();
}

struct Plan {
  bool nested = false;
  unsigned experiments = 2;
  unsigned slots = 2;
  unsigned phases = 1;
  Duration lull{};
  Duration stagger{};   // start offset between consecutive experiments
  unsigned active = 0;  // experiments that run (0 = all); calibration runs one
};

ExperimentFigures runExperiment(const NestingOptions& o, const Plan& plan, unsigned index,
                                const std::string& coordinator, const std::string& experimentKey,
                                const std::string& endpoint, SteadyTime::time_point start) {
  ExperimentFigures figures;
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 60s;
  if (plan.nested) {
    options.experiment = fmt::format("exp-{}", index);
    options.experimentKey = experimentKey;
  }
  auto client = client::Client::connect(options);
  if (!client.ok()) return {{}, 0, client.status()};
  unsigned sessionCount = plan.nested ? plan.slots : plan.slots / plan.experiments;
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (unsigned s = 0; s < sessionCount; ++s) {
    client::SessionOptions session{"noop", fmt::format("benchmark://nesting/{}", index)};
    auto started = plan.nested ? (*client)->startSession(session)
                               : (*client)->startSessionOn(endpoint, session);
    if (!started.ok()) return {{}, 0, started.status()};
    auto busy = (*started)->setParameter("noop.busy_us", std::to_string(o.busyMicros));
    if (!busy.ok()) return {{}, 0, busy.status()};
    sessions.push_back(std::move(started).value());
  }
  std::this_thread::sleep_until(start + plan.stagger * index);
  for (unsigned phase = 0; phase < plan.phases; ++phase) {
    auto begin = SteadyTime::now();
    figures.status = collect(sessions, o.stepsPerPhase);
    if (!figures.status.ok()) return figures;
    figures.phaseSeconds.push_back(
        std::chrono::duration<double>(SteadyTime::now() - begin).count());
    figures.steps += o.stepsPerPhase;
    if (phase + 1 < plan.phases) std::this_thread::sleep_for(plan.lull);
  }
  return figures;
}

Result<LayoutFigures> runLayout(const NestingOptions& o, const Plan& plan) {
  LocalClusterOptions local;
  local.log.level = spdlog::level::off;
  local.coordinator.heartbeatInterval = 100ms;
  local.worker.link.heartbeatInterval = 100ms;
  if (plan.nested) {
    local.workers = 0;
    local.nestingHosts = 1;
    local.worker.slots = plan.slots;
  } else {
    local.workers = plan.experiments;
    local.worker.slots = plan.slots / plan.experiments;
  }
  KILN_ASSIGN_OR_RETURN(auto cluster, LocalCluster::start(local));
  KILN_RETURN_IF_ERROR(cluster->waitUntilReady(10s));
  client::ClientOptions operatorOptions;
  operatorOptions.coordinator = cluster->coordinatorEndpoint();
  KILN_ASSIGN_OR_RETURN(auto operatorClient, client::Client::connect(operatorOptions));
  std::vector<std::string> keys(plan.experiments);
  if (plan.nested) {
    for (unsigned i = 0; i < plan.experiments; ++i) {
      ExperimentSpec spec;
      spec.name = fmt::format("exp-{}", i);
      spec.workers = 1;
      KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, operatorClient->openExperiment(spec));
      keys[i] = opened.key;
      KILN_RETURN_IF_ERROR(operatorClient->waitForExperiment(spec.name, 1, 10s).status());
    }
  }
  std::vector<std::string> endpoints = cluster->workerEndpoints();
  LayoutFigures figures;
  unsigned active = plan.active != 0 ? plan.active : plan.experiments;
  figures.experiments.resize(active);
  // Sessions start before the clock so that set-up is not measured.
  auto start = SteadyTime::now() + 500ms;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < active; ++i) {
    std::string endpoint = plan.nested ? "" : endpoints[i];
    threads.emplace_back([&, i, endpoint] {
      figures.experiments[i] =
          runExperiment(o, plan, i, cluster->coordinatorEndpoint(), keys[i], endpoint, start);
    });
  }
  std::this_thread::sleep_until(start);
  double cpuBefore = cpuSeconds();
  for (auto& thread : threads) thread.join();
  figures.wallSeconds = std::chrono::duration<double>(SteadyTime::now() - start).count();
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  figures.cpuUtilization = (cpuSeconds() - cpuBefore) / (figures.wallSeconds * cores);
  for (const auto& experiment : figures.experiments) KILN_RETURN_IF_ERROR(experiment.status);
  return figures;
}

// Steps per second of wall time, lulls included.
double stepsPerSecond(const LayoutFigures& figures) {
  std::uint64_t steps = 0;
  for (const auto& e : figures.experiments) steps += e.steps;
  return steps / std::max(figures.wallSeconds, 1e-9);
}

// The rate the experiments collect at, summed: what nesting improves. The
// lulls are fixed (training time), so wall-clock throughput gains less.
double collectionRate(const LayoutFigures& figures) {
  double rate = 0;
  for (const auto& e : figures.experiments) {
    double seconds = 0;
    for (double phase : e.phaseSeconds) seconds += phase;
    rate += e.steps / std::max(seconds, 1e-9);
  }
  return rate;
}

void addRows(Report& report, unsigned k, const char* layout, const LayoutFigures& figures) {
  for (unsigned i = 0; i < figures.experiments.size(); ++i) {
    Row row;
    row.text = {{"experiments", std::to_string(k)},
                {"layout", layout},
                {"experiment", fmt::format("exp-{}", i)}};
    const auto& phases = figures.experiments[i].phaseSeconds;
    row.numbers = {{"collect_ms_min", 1e3 * *std::min_element(phases.begin(), phases.end())},
                   {"collect_ms_median", 1e3 * median(phases)},
                   {"aggregate_collect_steps_s", collectionRate(figures)},
                   {"wall_steps_s", stepsPerSecond(figures)},
                   {"cpu_util_pct", 100 * figures.cpuUtilization}};
    report.rows.push_back(std::move(row));
  }
}

}  // namespace

Result<Report> runNestingBench(const NestingOptions& o) {
  Report report;
  report.title = "kiln bench nesting: experiments with 50% training lulls, dedicated vs nested";
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned k : o.experimentCounts) {
    if (k == 0) return invalidArgument("experiment counts must be at least 1");
    unsigned slots = o.slots != 0 ? o.slots : std::max(cores, k);
    if (slots % k != 0) {
      return invalidArgument(
          fmt::format("{} slots cannot be split evenly between {} experiments", slots, k));
    }
    // Calibrate: one dedicated collection phase sets the lull for both layouts.
    // One experiment alone on its dedicated slots, two phases without lull;
    // the second one is warm.
    Plan calibration{false, k, slots, 2, {}, {}, 1};
    KILN_ASSIGN_OR_RETURN(LayoutFigures calibrated, runLayout(o, calibration));
    double phase = calibrated.experiments[0].phaseSeconds.back();
    auto lull = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(phase));
    // Staggered so that at any time about half of the experiments collect.
    Duration stagger = 2 * lull / k;
    KILN_ASSIGN_OR_RETURN(LayoutFigures dedicated,
                          runLayout(o, Plan{false, k, slots, o.phases, lull, stagger}));
    KILN_ASSIGN_OR_RETURN(LayoutFigures nested,
                          runLayout(o, Plan{true, k, slots, o.phases, lull, stagger}));
    addRows(report, k, "dedicated", dedicated);
    addRows(report, k, "nested", nested);
    double worstRatio = 0;
    for (unsigned i = 0; i < k; ++i) {
      worstRatio = std::max(worstRatio, median(nested.experiments[i].phaseSeconds) /
                                            median(dedicated.experiments[i].phaseSeconds));
    }
    report.notes.push_back(fmt::format(
        "K={}: {} slots, lull {:.0f} ms; nested/dedicated aggregate collection throughput "
        "{:.2f}x (target >= 1.6x for K=2), wall-clock {:.2f}x; slowest nested collection phase "
        "{:.2f}x its dedicated time (target <= 1.0x)",
        k, slots, 1e3 * phase, collectionRate(nested) / collectionRate(dedicated),
        stepsPerSecond(nested) / stepsPerSecond(dedicated), worstRatio));
  }
  report.notes.push_back(fmt::format(
      "{} steps per phase, {} phases, {} us busy step, {} cores; CPU utilization is this "
      "process's share of all cores",
      o.stepsPerPhase, o.phases, o.busyMicros, cores));
  return report;
}

}  // namespace kiln::bench
