#include "bench/nesting_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <latch>
#include <thread>

#include "bench/nesting_layouts.h"
#include "bench/nesting_work.h"
#include "common/base/cpu_time.h"

namespace kiln::bench {
namespace {

using SteadyTime = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct ExperimentFigures {
  std::vector<double> phaseSeconds;
  std::uint64_t steps = 0;
  std::chrono::microseconds actionTime{0};  // the workers' time in this experiment's actions
  Status status;

  double collectSeconds() const {
    double seconds = 0;
    for (double phase : phaseSeconds) seconds += phase;
    return seconds;
  }
};

struct LayoutFigures {
  std::vector<ExperimentFigures> experiments;
  double wallSeconds = 0;
  double serverCpuSeconds = 0;  // the cluster's processes
  double clientCpuSeconds = 0;  // this process: the experiments' clients
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Plan {
  Layout layout = Layout::kDedicated;
  unsigned experiments = 2;
  unsigned slots = 2;
  unsigned phases = 1;
  unsigned steps = 1;  // per experiment and phase
  Duration lull{};
  Duration stagger{};   // start offset between consecutive experiments
  unsigned active = 0;  // experiments that run (0 = all); calibration runs one
};

// The experiments set up (untimed) in parallel, then start together: each
// thread counts down `ready` once its sessions are open (or failed to),
// and the clock starts when all have.
struct StartGate {
  explicit StartGate(unsigned experiments) : ready(experiments), start(startAt.get_future()) {}
  std::latch ready;
  std::promise<SteadyTime::time_point> startAt;
  std::shared_future<SteadyTime::time_point> start;
};

ExperimentFigures runExperiment(const NestingOptions& o, const WorkOptions& work, const Plan& plan,
                                unsigned index, const LayoutCluster& cluster, StartGate& gate) {
  ExperimentFigures figures;
  auto client = client::Client::connect(cluster.clientOptions(index));
  Result<std::unique_ptr<ExperimentWork>> opened = client.status();  // replaced if connected
  if (client.ok()) {
    // Dedicated: the experiment's own share of the slots; otherwise it may
    // use all of them while the others train.
    unsigned slots = plan.layout == Layout::kDedicated ? plan.slots / plan.experiments : plan.slots;
    opened = ExperimentWork::open(**client, work, index, o.sessionsPerSlot * slots,
                                  cluster.place(index), cluster.reachablePlaces(index));
  }
  gate.ready.count_down();
  if (!opened.ok()) return {{}, 0, {}, opened.status()};
  std::this_thread::sleep_until(gate.start.get() + plan.stagger * index);
  for (unsigned phase = 0; phase < plan.phases; ++phase) {
    auto begin = SteadyTime::now();
    figures.status = (*opened)->collect(plan.steps, figures.actionTime);
    if (!figures.status.ok()) return figures;
    figures.phaseSeconds.push_back(
        std::chrono::duration<double>(SteadyTime::now() - begin).count());
    figures.steps += plan.steps;
    if (phase + 1 < plan.phases) std::this_thread::sleep_for(plan.lull);
  }
  return figures;
}

Result<LayoutFigures> runLayout(const NestingOptions& o, WorkOptions& work, const Plan& plan) {
  KILN_ASSIGN_OR_RETURN(LayoutCluster cluster,
                        LayoutCluster::start(plan.layout, plan.experiments, plan.slots));
  if (work.kind == WorkKind::kLlvm && work.benchmarks.empty()) {
    KILN_ASSIGN_OR_RETURN(work.benchmarks, kilnBenchV0(cluster.operatorClient()));
  }
  LayoutFigures figures;
  unsigned active = plan.active != 0 ? plan.active : plan.experiments;
  figures.experiments.resize(active);
  StartGate gate(active);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < active; ++i) {
    threads.emplace_back(
        [&, i] { figures.experiments[i] = runExperiment(o, work, plan, i, cluster, gate); });
  }
  // Every thread counts down, whether its set-up worked or not; each step
  // of a set-up is bounded by the clients' request timeout.
  gate.ready.wait();
  const auto start = SteadyTime::now();
  gate.startAt.set_value(start);
  const double serverCpuBefore = descendantsCpuSeconds(), clientCpuBefore = processCpuSeconds();
  for (auto& thread : threads) thread.join();
  figures.wallSeconds = std::chrono::duration<double>(SteadyTime::now() - start).count();
  figures.serverCpuSeconds = descendantsCpuSeconds() - serverCpuBefore;
  figures.clientCpuSeconds = processCpuSeconds() - clientCpuBefore;
  for (const auto& experiment : figures.experiments) KILN_RETURN_IF_ERROR(experiment.status);
  return figures;
}

// The rate the experiments collect at, summed: what sharing the slots
// improves. The lulls are fixed (training time), so wall-clock throughput
// gains less.
double collectionRate(const LayoutFigures& figures) {
  double rate = 0;
  for (const auto& e : figures.experiments) rate += e.steps / std::max(e.collectSeconds(), 1e-9);
  return rate;
}

// Steps per second of wall time, lulls included.
double wallRate(const LayoutFigures& figures) {
  std::uint64_t steps = 0;
  for (const auto& e : figures.experiments) steps += e.steps;
  return steps / std::max(figures.wallSeconds, 1e-9);
}

// Jain's index over the experiments' collection rates, in percent: 100 when
// all collect alike, 100/K when one takes everything.
double jainPercent(const LayoutFigures& figures) {
  double sum = 0, squares = 0;
  for (const auto& e : figures.experiments) {
    double rate = e.steps / std::max(e.collectSeconds(), 1e-9);
    sum += rate;
    squares += rate * rate;
  }
  return 100 * sum * sum / (figures.experiments.size() * std::max(squares, 1e-18));
}

// What a layout's figures are judged against: one experiment alone on its
// dedicated slots (for the dedicated layout; the calibration), or the
// dedicated layout of the same run.
struct Baseline {
  std::string name;
  double aggregateRate = 0;
  std::vector<double> collectSeconds;  // per experiment: median collection phase
};

void addRows(Report& report, const Plan& plan, WorkKind kind, const LayoutFigures& figures,
             const Baseline& baseline) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> medians;
  for (const auto& e : figures.experiments) medians.push_back(median(e.phaseSeconds));
  std::chrono::microseconds actionTime{0};
  for (const auto& e : figures.experiments) actionTime += e.actionTime;
  const double wall = std::max(figures.wallSeconds, 1e-9);
  const double lullMs = std::chrono::duration<double, std::milli>(plan.lull).count();
  Row layout;
  layout.text = {{"work", workKindName(kind)},
                 {"experiments", std::to_string(plan.experiments)},
                 {"layout", layoutName(plan.layout)},
                 {"judged_against", baseline.name}};
  layout.numbers = {
      {"slots", double(plan.slots)},
      {"lull_ms", lullMs},
      {"aggregate_collect_steps_s", collectionRate(figures)},
      {"x_aggregate", collectionRate(figures) / std::max(baseline.aggregateRate, 1e-9)},
      {"wall_steps_s", wallRate(figures)},
      {"fairness_jain_pct", jainPercent(figures)},
      {"collect_max_over_min",
       *std::max_element(medians.begin(), medians.end()) /
           std::max(*std::min_element(medians.begin(), medians.end()), 1e-9)},
      {"slot_busy_pct", 100 * (actionTime.count() / 1e6) / (wall * plan.slots)},
      {"server_cpu_pct", 100 * figures.serverCpuSeconds / (wall * cores)},
      {"client_cpu_pct", 100 * figures.clientCpuSeconds / (wall * cores)}};
  report.rows.push_back(std::move(layout));
  for (unsigned i = 0; i < figures.experiments.size(); ++i) {
    const auto& e = figures.experiments[i];
    Row row;
    row.text = {{"work", workKindName(kind)},
                {"experiments", std::to_string(plan.experiments)},
                {"layout", layoutName(plan.layout)},
                {"experiment", fmt::format("exp-{}", i)},
                {"judged_against", baseline.name}};
    row.numbers = {
        {"collect_ms_median", 1e3 * medians[i]},
        {"collect_ms_min", 1e3 * *std::min_element(e.phaseSeconds.begin(), e.phaseSeconds.end())},
        {"collect_steps_s", e.steps / std::max(e.collectSeconds(), 1e-9)},
        {"x_collect", medians[i] / std::max(baseline.collectSeconds.at(i), 1e-9)}};
    report.rows.push_back(std::move(row));
  }
}

Status runComparison(const NestingOptions& o, WorkKind kind, unsigned k, Report& report) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned slots = o.slots != 0 ? o.slots : std::max(cores, k);
  if (slots % k != 0) {
    return invalidArgument(
        fmt::format("{} slots cannot be split evenly between {} experiments", slots, k));
  }
  WorkOptions work{kind, o.busyMicros, o.passesPerStep, o.episodeSteps, {}};
  const unsigned steps = kind == WorkKind::kBusy ? o.busySteps : o.llvmSteps;
  // Calibrate: one experiment alone on its dedicated slots, two phases
  // without lull; the second one (warm) sets the lull of every layout and
  // is what the dedicated layout is judged against.
  Plan calibration{Layout::kDedicated, k, slots, 2, steps, {}, {}, 1};
  KILN_ASSIGN_OR_RETURN(LayoutFigures calibrated, runLayout(o, work, calibration));
  const double alone = calibrated.experiments[0].phaseSeconds.back();
  const auto lull = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(alone));
  // Staggered so that at any time about half of the experiments collect.
  Plan plan{Layout::kDedicated, k, slots, o.phases, steps, lull, 2 * lull / k, 0};
  Baseline aloneBaseline{"alone", k * steps / alone, std::vector<double>(k, alone)};
  KILN_ASSIGN_OR_RETURN(LayoutFigures dedicated, runLayout(o, work, plan));
  addRows(report, plan, kind, dedicated, aloneBaseline);
  Baseline dedicatedBaseline{"dedicated", collectionRate(dedicated), {}};
  for (const auto& e : dedicated.experiments) {
    dedicatedBaseline.collectSeconds.push_back(median(e.phaseSeconds));
  }
  std::vector<std::string> summary;
  for (Layout layout : {Layout::kShared, Layout::kNested}) {
    plan.layout = layout;
    KILN_ASSIGN_OR_RETURN(LayoutFigures figures, runLayout(o, work, plan));
    addRows(report, plan, kind, figures, dedicatedBaseline);
    double slowest = 0;
    for (unsigned i = 0; i < k; ++i) {
      slowest = std::max(slowest, median(figures.experiments[i].phaseSeconds) /
                                      dedicatedBaseline.collectSeconds[i]);
    }
    summary.push_back(fmt::format(
        "{} {:.2f}x aggregate collection, slowest experiment's collection {:.2f}x, Jain {:.0f}%",
        layoutName(layout), collectionRate(figures) / dedicatedBaseline.aggregateRate, slowest,
        jainPercent(figures)));
  }
  report.notes.push_back(fmt::format("{} K={}: {} slots, lull {:.0f} ms; against dedicated: {}",
                                     workKindName(kind), k, slots, 1e3 * alone,
                                     fmt::join(summary, "; ")));
  return okStatus();
}

}  // namespace

Result<Report> runNestingBench(const NestingOptions& o) {
  std::vector<WorkKind> kinds;
  if (o.work == "busy" || o.work == "both") kinds.push_back(WorkKind::kBusy);
  if (o.work == "llvm" || o.work == "both") kinds.push_back(WorkKind::kLlvm);
  if (kinds.empty()) return invalidArgument("--work is busy, llvm or both, not '" + o.work + "'");
  if (o.sessionsPerSlot == 0) return invalidArgument("sessions per slot must be at least 1");
  Report report;
  report.title =
      "kiln bench nesting: experiments with 50% training lulls; dedicated slots, one shared pool, "
      "one kiln nest host";
  for (WorkKind kind : kinds) {
    for (unsigned k : o.experimentCounts) {
      if (k == 0) return invalidArgument("experiment counts must be at least 1");
      KILN_RETURN_IF_ERROR(runComparison(o, kind, k, report));
    }
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  report.notes.push_back(fmt::format(
      "busy: {} noop steps per phase spinning {} us each; llvm: {} steps per phase of {} random "
      "passes, episodes of {} steps on kiln-bench-v0 (a new session each); {} phases, {} "
      "sessions per slot an experiment may use; {} cores",
      o.busySteps, o.busyMicros, o.llvmSteps, o.passesPerStep, o.episodeSteps, o.phases,
      o.sessionsPerSlot, cores));
  report.notes.push_back(
      "layouts: dedicated = K plain workers of S/K slots, one per experiment, judged against "
      "'alone' (one experiment by itself on its dedicated slots: the calibration, lull_ms long); "
      "shared = the same K workers as one pool, sessions placed by the coordinator, no nesting; "
      "nested = one `kiln nest` host of S slots, a child process per experiment (its default); "
      "shared and nested are judged against dedicated in the same run. x_aggregate = aggregate "
      "collection steps/s over the baseline's; x_collect = the experiment's median collection "
      "phase over the baseline's; fairness_jain_pct = Jain's index over the experiments' "
      "collection rates (100 = equal, 100/K = one takes all); collect_max_over_min = slowest "
      "over fastest median collection phase; slot_busy_pct = the workers' time in actions over "
      "wall x slots; server_cpu_pct and client_cpu_pct = CPU of the cluster's processes and of "
      "the bench's clients over wall x cores.");
  return report;
}

}  // namespace kiln::bench
