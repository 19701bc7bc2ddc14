#include "bench/nesting_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <latch>
#include <optional>
#include <thread>

#include "bench/nesting_layouts.h"
#include "bench/nesting_learner.h"
#include "bench/nesting_work.h"
#include "common/base/cpu_time.h"

namespace kiln::bench {
namespace {

using SteadyTime = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct ExperimentFigures {
  std::vector<double> phaseSeconds;
  double updateSeconds = 0;  // its learner's updates, summed
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
  std::string budget;  // each host's CPU budget
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
  unsigned steps = 1;         // per experiment and phase
  unsigned updateEpochs = 0;  // the learner's update after each phase (0: none)
  Duration stagger{};         // start offset between consecutive experiments
  unsigned active = 0;        // experiments that run (0 = all); calibration runs one
  WorkerBudget budget;
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

// Each experiment's learner: a process of its own, in a budget of its own
// when budgets are on (a learner machine).
struct Learners {
  std::vector<std::unique_ptr<CpuBudgetGroup>> budgets;  // outlive the processes
  std::vector<std::unique_ptr<LearnerProcess>> processes;
};

Result<Learners> startLearners(const WorkerBudget& budget, unsigned count, unsigned batchRows) {
  Learners learners;
  const CpuAssignment whole =
      budget.support
          ? assignWholeCpus(budget.support->cpus, std::vector<double>(count, budget.learnerCpus))
          : CpuAssignment{};
  for (unsigned i = 0; i < count; ++i) {
    // Seeded by the experiment alone: every layout trains alike.
    KILN_ASSIGN_OR_RETURN(auto process, LearnerProcess::start(i + 1, batchRows));
    if (budget.support) {
      KILN_ASSIGN_OR_RETURN(auto group,
                            CpuBudgetGroup::create(*budget.support, fmt::format("learner-{}", i),
                                                   budget.learnerCpus, whole.cpus.at(i)));
      KILN_RETURN_IF_ERROR(group->admit(process->pid()));
      learners.budgets.push_back(std::move(group));
    }
    learners.processes.push_back(std::move(process));
  }
  return learners;
}

// Seconds per epoch of one learner's updates (a few updates long enough to
// time), appended to `seconds`.
Status timeEpochs(LearnerProcess& learner, std::vector<double>& seconds) {
  KILN_RETURN_IF_ERROR(learner.update(2));  // warm: the first allocates its activations
  unsigned epochs = 2;
  for (unsigned timed = 0; timed < 3;) {
    const auto start = SteadyTime::now();
    KILN_RETURN_IF_ERROR(learner.update(epochs));
    const double took = std::chrono::duration<double>(SteadyTime::now() - start).count();
    // Long enough to span many of a quota's periods, else measured again.
    if (took < 0.1 && epochs < (1u << 20)) {
      epochs *= 2;
      continue;
    }
    seconds.push_back(took / epochs);
    ++timed;
  }
  return okStatus();
}

// Seconds one epoch of a learner's update takes on its machine, for sizing
// the lulls: the median over `count` learners updating at once, as they run
// in the layouts. One learner timed by itself on an otherwise idle machine
// ran 1.5x slower on a 20% quota than four did together (a throttled
// process whose CPU idles pays a wake-up every period).
Result<double> secondsPerEpoch(const WorkerBudget& budget, unsigned count, unsigned batchRows) {
  KILN_ASSIGN_OR_RETURN(Learners learners, startLearners(budget, count, batchRows));
  std::vector<std::vector<double>> seconds(count);
  std::vector<Status> statuses(count);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < count; ++i) {
    threads.emplace_back([&, i] { statuses[i] = timeEpochs(*learners.processes[i], seconds[i]); });
  }
  for (auto& thread : threads) thread.join();
  std::vector<double> all;
  for (unsigned i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(statuses[i]);
    all.insert(all.end(), seconds[i].begin(), seconds[i].end());
  }
  return median(all);
}

ExperimentFigures runExperiment(const NestingOptions& o, const WorkOptions& work, const Plan& plan,
                                unsigned index, const LayoutCluster& cluster,
                                LearnerProcess& learner, StartGate& gate) {
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
  if (!opened.ok()) return {{}, 0, 0, {}, opened.status()};
  std::this_thread::sleep_until(gate.start.get() + plan.stagger * index);
  for (unsigned phase = 0; phase < plan.phases; ++phase) {
    auto begin = SteadyTime::now();
    figures.status = (*opened)->collect(plan.steps, figures.actionTime);
    if (!figures.status.ok()) return figures;
    const auto collected = SteadyTime::now();
    figures.phaseSeconds.push_back(std::chrono::duration<double>(collected - begin).count());
    figures.steps += plan.steps;
    // Every collection is followed by its update, the last one too: the
    // experiment's time is collection and training, in turns.
    figures.status = learner.update(plan.updateEpochs);
    if (!figures.status.ok()) return figures;
    figures.updateSeconds += std::chrono::duration<double>(SteadyTime::now() - collected).count();
  }
  return figures;
}

Result<LayoutFigures> runLayout(const NestingOptions& o, WorkOptions& work, const Plan& plan) {
  KILN_ASSIGN_OR_RETURN(LayoutCluster cluster, LayoutCluster::start(plan.layout, plan.experiments,
                                                                    plan.slots, plan.budget));
  if (work.kind == WorkKind::kLlvm && work.benchmarks.empty()) {
    KILN_ASSIGN_OR_RETURN(work.benchmarks, kilnBenchV0(cluster.operatorClient()));
  }
  LayoutFigures figures;
  figures.budget = cluster.budgetNote();
  unsigned active = plan.active != 0 ? plan.active : plan.experiments;
  figures.experiments.resize(active);
  KILN_ASSIGN_OR_RETURN(Learners learners, startLearners(plan.budget, active, plan.steps));
  StartGate gate(active);
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < active; ++i) {
    threads.emplace_back([&, i] {
      figures.experiments[i] =
          runExperiment(o, work, plan, i, cluster, *learners.processes[i], gate);
    });
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

// The learners' share of the experiments' time: their updates over their
// collection and updates, summed over the experiments.
double lullFraction(const LayoutFigures& figures) {
  double updating = 0, total = 0;
  for (const auto& e : figures.experiments) {
    updating += e.updateSeconds;
    total += e.updateSeconds + e.collectSeconds();
  }
  return updating / std::max(total, 1e-9);
}

// What a layout's figures are judged against: each experiment's collection
// on its dedicated machine without updates (for the dedicated layout; the
// calibration), or the dedicated layout of the same run.
struct Baseline {
  std::string name;
  double aggregateRate = 0;
  double wallRate = 0;
  std::vector<double> collectSeconds;  // per experiment: median collection phase
  double lull = 0;                     // the dedicated layout's measured lull fraction
};

void addRows(Report& report, const Plan& plan, double lullTarget, WorkKind kind,
             const LayoutFigures& figures, const Baseline& baseline) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> medians;
  for (const auto& e : figures.experiments) medians.push_back(median(e.phaseSeconds));
  std::chrono::microseconds actionTime{0};
  for (const auto& e : figures.experiments) actionTime += e.actionTime;
  const double wall = std::max(figures.wallSeconds, 1e-9);
  const double lull = baseline.name == "dedicated" ? baseline.lull : lullFraction(figures);
  Row layout;
  layout.text = {{"work", workKindName(kind)},
                 {"experiments", std::to_string(plan.experiments)},
                 {"layout", layoutName(plan.layout)},
                 {"judged_against", baseline.name},
                 {"host_budget", figures.budget}};
  layout.numbers = {
      {"slots", double(plan.slots)},
      {"lull_target_pct", 100 * lullTarget},
      {"lull_pct", 100 * lullFraction(figures)},
      {"aggregate_collect_steps_s", collectionRate(figures)},
      {"x_aggregate", collectionRate(figures) / std::max(baseline.aggregateRate, 1e-9)},
      {"ideal_x", idealCollectionGain(lull, plan.experiments)},
      {"wall_steps_s", wallRate(figures)},
      {"x_wall", wallRate(figures) / std::max(baseline.wallRate, 1e-9)},
      {"ideal_x_wall", idealWallGain(lull, plan.experiments)},
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
        {"lull_target_pct", 100 * lullTarget},
        {"collect_ms_median", 1e3 * medians[i]},
        {"collect_ms_min", 1e3 * *std::min_element(e.phaseSeconds.begin(), e.phaseSeconds.end())},
        {"update_ms_mean", 1e3 * e.updateSeconds / std::max<std::size_t>(e.phaseSeconds.size(), 1)},
        {"collect_steps_s", e.steps / std::max(e.collectSeconds(), 1e-9)},
        {"x_collect", medians[i] / std::max(baseline.collectSeconds.at(i), 1e-9)}};
    report.rows.push_back(std::move(row));
  }
}

// Calibrates the experiments on their dedicated machines, all at once and
// without updates (two phases; the second, warm one is each one's collection
// time, their median C), then runs every layout for each lull L in `o.lulls`:
// updates sized to C * L / (1 - L). All at once, not one by itself: one
// experiment alone on an otherwise idle machine collected 1.5x slower on a
// 20% quota than with every dedicated machine busy, as the layouts run.
Status runComparison(const NestingOptions& o, const WorkerBudget& machines, WorkKind kind,
                     unsigned k, Report& report) {
  // The learners' CPUs, split between the K learner machines.
  WorkerBudget budget = machines;
  budget.learnerCpus = machines.learnerCpus / k;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned slots = o.slots != 0 ? o.slots : std::max(cores, k);
  if (slots % k != 0) {
    return invalidArgument(
        fmt::format("{} slots cannot be split evenly between {} experiments", slots, k));
  }
  WorkOptions work{kind, o.busyMicros, o.passesPerStep, o.episodeSteps, {}};
  const unsigned steps = kind == WorkKind::kBusy ? o.busySteps : o.llvmSteps;
  Plan calibration{Layout::kDedicated, k, slots, 2, steps, 0, {}, 0, budget};
  KILN_ASSIGN_OR_RETURN(LayoutFigures calibrated, runLayout(o, work, calibration));
  std::vector<double> calibratedSeconds;
  for (const auto& e : calibrated.experiments) calibratedSeconds.push_back(e.phaseSeconds.back());
  const double collect = median(calibratedSeconds);
  KILN_ASSIGN_OR_RETURN(const double epochSeconds, secondsPerEpoch(budget, k, steps));
  for (double lull : o.lulls) {
    const double updateSeconds = collect * lull / (1 - lull);
    const auto epochs = static_cast<unsigned>(std::lround(updateSeconds / epochSeconds));
    // Staggered so that the experiments' collections spread over a cycle.
    const auto cycle = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(collect + updateSeconds));
    Plan plan{Layout::kDedicated, k, slots, o.phases, steps, epochs, cycle / k, 0, budget};
    Baseline calibrationBaseline{"calibration", k * steps / collect,
                                 k * steps / (collect + updateSeconds), calibratedSeconds, lull};
    KILN_ASSIGN_OR_RETURN(LayoutFigures dedicated, runLayout(o, work, plan));
    addRows(report, plan, lull, kind, dedicated, calibrationBaseline);
    Baseline dedicatedBaseline{
        "dedicated", collectionRate(dedicated), wallRate(dedicated), {}, lullFraction(dedicated)};
    for (const auto& e : dedicated.experiments) {
      dedicatedBaseline.collectSeconds.push_back(median(e.phaseSeconds));
    }
    const double ideal = idealCollectionGain(dedicatedBaseline.lull, k);
    const double idealWall = idealWallGain(dedicatedBaseline.lull, k);
    std::vector<std::string> summary;
    for (Layout layout : {Layout::kShared, Layout::kNested}) {
      plan.layout = layout;
      KILN_ASSIGN_OR_RETURN(LayoutFigures figures, runLayout(o, work, plan));
      addRows(report, plan, lull, kind, figures, dedicatedBaseline);
      double slowest = 0;
      for (unsigned i = 0; i < k; ++i) {
        slowest = std::max(slowest, median(figures.experiments[i].phaseSeconds) /
                                        dedicatedBaseline.collectSeconds[i]);
      }
      summary.push_back(fmt::format(
          "{} {:.2f}x aggregate collection (ideal {:.2f}x), {:.2f}x wall throughput (ideal "
          "{:.2f}x), slowest experiment's collection phase {:.2f}x its dedicated one's, Jain "
          "{:.0f}%",
          layoutName(layout), collectionRate(figures) / dedicatedBaseline.aggregateRate, ideal,
          wallRate(figures) / dedicatedBaseline.wallRate, idealWall, slowest,
          jainPercent(figures)));
    }
    report.notes.push_back(fmt::format(
        "{} K={} L={:.2f}: {} slots, collection C {:.0f} ms, update {:.0f} ms ({} epochs), "
        "measured lull {:.0f}% on dedicated machines; against dedicated: {}",
        workKindName(kind), k, lull, slots, 1e3 * collect, 1e3 * epochs * epochSeconds, epochs,
        100 * dedicatedBaseline.lull, fmt::join(summary, "; ")));
  }
  return okStatus();
}

}  // namespace

Result<Report> runNestingBench(const NestingOptions& o) {
  std::vector<WorkKind> kinds;
  if (o.work == "busy" || o.work == "both") kinds.push_back(WorkKind::kBusy);
  if (o.work == "llvm" || o.work == "both") kinds.push_back(WorkKind::kLlvm);
  if (kinds.empty()) return invalidArgument("--work is busy, llvm or both, not '" + o.work + "'");
  if (o.sessionsPerSlot == 0) return invalidArgument("sessions per slot must be at least 1");
  for (double lull : o.lulls) {
    if (!(lull >= 0 && lull < 1)) {
      return invalidArgument(fmt::format("a lull is a fraction in [0, 1), not {}", lull));
    }
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  KILN_ASSIGN_OR_RETURN(std::optional<CpuBudgetSupport> support, cpuBudgetsFor(o.budget));
  // Budgets are caps, not reservations: the coordinator and the clients
  // run outside them and need some CPU too, or the learner machines get
  // less than their budget whenever the workers use all of theirs (four
  // learners' updates took 20-60% longer beside a busy nesting host when
  // the budgets added up to every core). A fifth of the cores stays free.
  const double workerCpus = o.workerCpus > 0 ? o.workerCpus : 0.4 * cores;
  const WorkerBudget budget{support ? &*support : nullptr, workerCpus,
                            std::max(0.05, 0.8 * cores - workerCpus)};
  Report report;
  report.title =
      "kiln bench nesting: experiments alternating collection and a learner's update; dedicated "
      "machines, one shared pool, one kiln nest host";
  for (WorkKind kind : kinds) {
    for (unsigned k : o.experimentCounts) {
      if (k == 0) return invalidArgument("experiment counts must be at least 1");
      KILN_RETURN_IF_ERROR(runComparison(o, budget, kind, k, report));
    }
  }
  report.notes.push_back(
      support ? fmt::format("machines: the worker hosts share {:.2f} CPUs: each plain worker "
                            "{:.2f}/K, the nesting host all of them; each experiment's learner "
                            "is a process on a machine of {:.2f}/K CPUs; enforced with {}; the "
                            "coordinator and the clients run outside every budget",
                            budget.cpus, budget.cpus, budget.learnerCpus, support->note)
              : std::string("machines: none (--budget none): every host and learner shares "
                            "every core, so a dedicated host's idle CPU is lent to the others by "
                            "the kernel, as no separate machines would"));
  report.notes.push_back(fmt::format(
      "busy: {} noop steps per phase spinning {} us each; llvm: {} steps per phase of {} random "
      "passes, episodes of {} steps on kiln-bench-v0 (a new session each); {} phases, each "
      "followed by the learner's update (Adam steps of a 57-64-64-142 network over a batch of "
      "the phase's steps, in the experiment's learner process, sized to take C * L / (1 - L) "
      "on its learner machine, C = an experiment's collection on its dedicated machine, the "
      "median of the K calibrated at once); {} sessions per slot an "
      "experiment may use; {} cores",
      o.busySteps, o.busyMicros, o.llvmSteps, o.passesPerStep, o.episodeSteps, o.phases,
      o.sessionsPerSlot, cores));
  report.notes.push_back(
      "layouts: dedicated = K plain workers of S/K slots, one per experiment, judged against "
      "'calibration' (the K experiments collecting at once on their dedicated machines, no "
      "updates); shared = "
      "the same K workers as one pool, sessions placed by the coordinator, no nesting; nested = "
      "one `kiln nest` host of S slots, a child process per experiment (its default); shared "
      "and nested are judged against dedicated in the same run. x_aggregate = aggregate "
      "collection steps/s over the baseline's; ideal_x = the most it can gain with L the "
      "dedicated layout's measured lull (lull_pct): K if L >= 1/2, else min(K, (1-L)/(1-2L)) "
      "(an experiment collects at best on all K machines, and the K collections must fit the "
      "machines over a cycle); x_wall = steps per wall second, updates included, over the "
      "baseline's, and ideal_x_wall = 1/(L + (1-L) max(1/K, (1-2L)/(1-L))), below the "
      "utilization bound min(K, 1/(1-L)) because every update still takes as long; x_collect = the "
      "experiment's median collection phase "
      "over the baseline's; fairness_jain_pct = Jain's index over the experiments' collection "
      "rates (100 = equal, 100/K = one takes all); collect_max_over_min = slowest over fastest "
      "median collection phase; slot_busy_pct = the workers' time in actions over wall x "
      "slots; server_cpu_pct and client_cpu_pct = CPU of the cluster's processes and of this "
      "process (clients and learners) over wall x cores.");
  return report;
}

}  // namespace kiln::bench
