#include "bench/nesting_layouts.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "bench/kiln_executable.h"
#include "tests/support/process_probe.h"

namespace kiln::bench {

using namespace std::chrono_literals;

namespace {

std::string experimentName(unsigned i) { return fmt::format("exp-{}", i); }

}  // namespace

Status LayoutCluster::budgetHost(const WorkerBudget& budget, const CpuAssignment& wholeCpus,
                                 unsigned index, double cpus, pid_t pid) {
  if (budget.support == nullptr) return okStatus();
  KILN_ASSIGN_OR_RETURN(
      auto group,
      CpuBudgetGroup::create(*budget.support, fmt::format("{}-{}", layoutName(layout_), index),
                             cpus, wholeCpus.cpus.at(index)));
  KILN_RETURN_IF_ERROR(group->admit(pid));
  budgets_.push_back(std::move(group));
  return okStatus();
}

std::string LayoutCluster::budgetNote() const {
  if (budgets_.empty()) return "none";
  return fmt::format("{} per host", budgets_.front()->describe());
}

Result<LayoutCluster> LayoutCluster::start(Layout layout, unsigned experiments, unsigned slots,
                                           const WorkerBudget& budget) {
  if (experiments == 0 || slots % experiments != 0) {
    return invalidArgument(
        fmt::format("{} slots cannot be split evenly between {} experiments", slots, experiments));
  }
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster children,
                        testsupport::ChildCluster::create(kilnExecutable()));
  LayoutCluster cluster(layout, std::move(children));
  KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * coordinator,
                        cluster.children_.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0",
                                                 "--heartbeat-seconds", "0.2", "--log-level", "off",
                                                 // One operator client opens every experiment.
                                                 "--max-experiments-per-client",
                                                 std::to_string(std::max(1u, experiments))}));
  cluster.coordinator_ = coordinator->endpoint;
  const bool nested = layout == Layout::kNested;
  const unsigned hosts = nested ? 1 : experiments;
  const double hostCpus = budget.cpus / hosts;
  const CpuAssignment wholeCpus =
      budget.support ? assignWholeCpus(budget.support->cpus, std::vector<double>(hosts, hostCpus))
                     : CpuAssignment{};
  for (unsigned i = 0; i < hosts; ++i) {
    std::vector<std::string> args =
        testsupport::benchWorkerArgs(cluster.coordinator_, nested ? slots : slots / experiments);
    // `kiln nest` with no mode flag: a child process per experiment, as it
    // runs by default.
    if (nested) args[0] = "nest";
    KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * host, cluster.children_.spawn(args));
    KILN_RETURN_IF_ERROR(cluster.budgetHost(budget, wholeCpus, i, hostCpus, host->process.pid()));
  }
  client::ClientOptions options;
  options.coordinator = cluster.coordinator_;
  KILN_ASSIGN_OR_RETURN(cluster.operator_, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*cluster.operator_, hosts, 20s));
  if (nested) {
    for (unsigned i = 0; i < experiments; ++i) {
      ExperimentSpec spec;
      spec.name = experimentName(i);
      spec.workers = 1;
      KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened,
                            cluster.operator_->openExperiment(spec));
      cluster.experimentKeys_.push_back(opened.key);
      KILN_RETURN_IF_ERROR(cluster.operator_->waitForExperiment(spec.name, 1, 20s).status());
    }
  } else {
    KILN_ASSIGN_OR_RETURN(auto workers, cluster.operator_->listCluster());
    for (const auto& worker : workers) cluster.workers_.push_back(worker.endpoint);
    std::sort(cluster.workers_.begin(), cluster.workers_.end());
  }
  return cluster;
}

client::ClientOptions LayoutCluster::clientOptions(unsigned i) const {
  client::ClientOptions options;
  options.coordinator = coordinator_;
  options.requestTimeout = 60s;
  if (layout_ == Layout::kNested) {
    options.experiment = experimentName(i);
    options.experimentKey = experimentKeys_.at(i);
  }
  return options;
}

SessionPlace LayoutCluster::place(unsigned i) const {
  if (layout_ == Layout::kDedicated) return {workers_.at(i)};
  return {};  // the coordinator places: over the pool, or on the experiment's worker
}

std::vector<SessionPlace> LayoutCluster::reachablePlaces(unsigned i) const {
  if (layout_ != Layout::kShared) return {place(i)};
  std::vector<SessionPlace> places;
  for (const std::string& worker : workers_) places.push_back({worker});
  return places;
}

double descendantsCpuSeconds() {
  double seconds = 0;
  for (const testsupport::ProcessInfo& process : testsupport::descendantsOf(::getpid()))
    seconds += testsupport::cpuSeconds(process.pid);
  return seconds;
}

}  // namespace kiln::bench
