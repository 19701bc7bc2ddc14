#include "tools/demo/learning_demo.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <ranges>
#include <thread>

#include "common/base/cpu_time.h"
#include "common/process/cpu_budget.h"
#include "tools/demo/demo_run.h"
#include "tools/demo/learning_report.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::demo {
namespace {

using SteadyTime = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A cluster laid out for one comparison: how each experiment's client
// connects and where its sessions go.
struct LayoutCluster {
  // Before `local`: the groups outlive the processes in them.
  std::vector<std::unique_ptr<CpuBudgetGroup>> budgets;  // per host, on embedded clusters
  std::string budgetNote = "none";
  std::unique_ptr<LocalCluster> local;  // null on the user's cluster
  client::ClientOptions base;
  std::unique_ptr<client::Client> operatorClient;
  std::vector<client::ClientOptions> clients;   // per experiment
  std::vector<LearnerPlace> places;             // per experiment
  std::vector<std::vector<LearnerPlace>> warm;  // per experiment: places to warm up
  std::vector<std::string> experimentNames;     // opened on nesting hosts (closed at the end)
  ~LayoutCluster() {
    if (operatorClient) {
      for (const auto& name : experimentNames) (void)operatorClient->closeExperiment(name);
    }
  }
};

// The worker hosts' CPUs together: as asked, else half the cores (the
// learners get the other half).
double workerCpus(const LearningDemoOptions& o) {
  return o.workerCpus > 0 ? o.workerCpus
                          : std::max(0.5, std::max(1u, std::thread::hardware_concurrency()) / 2.0);
}

// Each host of an embedded layout a machine of its own budget: `cpus` in
// all, split between the hosts.
Status budgetHosts(LayoutCluster& cluster, const CpuBudgetSupport& support, Layout layout,
                   std::size_t hosts, double cpus) {
  const CpuAssignment whole =
      assignWholeCpus(support.cpus, std::vector<double>(hosts, cpus / hosts));
  for (std::size_t h = 0; h < hosts; ++h) {
    KILN_ASSIGN_OR_RETURN(auto group, CpuBudgetGroup::create(
                                          support, fmt::format("demo-{}-{}", layoutName(layout), h),
                                          cpus / hosts, whole.cpus.at(h)));
    cluster.budgets.push_back(std::move(group));
  }
  cluster.budgetNote = fmt::format("{} per host", cluster.budgets.front()->describe());
  return okStatus();
}

Result<std::unique_ptr<LayoutCluster>> startLayout(Layout layout, const LearningDemoOptions& o,
                                                   const std::optional<CpuBudgetSupport>& support,
                                                   unsigned slots) {
  auto cluster = std::make_unique<LayoutCluster>();
  cluster->base.keys = o.keys;
  cluster->base.requestTimeout = 60s;
  const std::size_t k = o.experiments.size();
  if (o.coordinator.empty()) {
    LocalClusterOptions local;
    const bool nested = layout == Layout::kNested;
    local.workers = nested ? 0 : static_cast<unsigned>(k);
    local.nestingHosts = nested ? 1 : 0;
    local.worker.slots = nested ? slots : slots / static_cast<unsigned>(k);
    local.coordinator.heartbeatInterval = 100ms;
    local.worker.link.heartbeatInterval = 100ms;
    local.keys = o.keys;
    local.worker.allowFiles = o.allowFiles;
    if (support) {
      // Hosts are processes, so that each can be a machine with its budget.
      local.isolateWorkers = true;
      local.isolateNestingHosts = true;
      // Heartbeats every 100 ms feed the utilization timeline; a host held
      // to its budget may miss a few in a row while it compiles, which is
      // no reason to declare it lost (2 s of silence is).
      local.coordinator.liveness = 20;
      local.worker.link.liveness = 20;
      KILN_RETURN_IF_ERROR(budgetHosts(*cluster, *support, layout, nested ? 1 : k, workerCpus(o)));
      local.onWorkerProcess = [groups = &cluster->budgets](std::size_t host, pid_t pid) {
        // A host that cannot be budgeted still runs, and says so.
        if (Status admitted = groups->at(host)->admit(pid); !admitted.ok()) {
          std::fprintf(stderr, "kiln demo: host %zu runs without its CPU budget: %s\n", host,
                       admitted.message().c_str());
        }
      };
    }
    KILN_ASSIGN_OR_RETURN(cluster->local, LocalCluster::start(local));
    KILN_RETURN_IF_ERROR(cluster->local->waitUntilReady(10s));
    cluster->base.coordinator = cluster->local->coordinatorEndpoint();
  } else {
    cluster->base.coordinator = o.coordinator;
  }
  KILN_ASSIGN_OR_RETURN(cluster->operatorClient, client::Client::connect(cluster->base));
  if (auto spaces = cluster->operatorClient->getSpaces("llvm"); !spaces.ok()) {
    return notFound(fmt::format(
        "this cluster serves no 'llvm' session type ({}); build with -DKILN_WITH_LLVM=ON, or "
        "try `kiln demo --noop`",
        spaces.status().message()));
  }
  std::vector<std::string> workers;
  if (cluster->local) {
    workers = cluster->local->workerEndpoints();
  }
  for (std::size_t i = 0; i < k; ++i) {
    client::ClientOptions options = cluster->base;
    if (layout == Layout::kNested) {
      ExperimentSpec spec;
      spec.name = o.experiments[i].name;
      spec.workers = 1;
      spec.sessionTypes = {"llvm"};
      KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened,
                            cluster->operatorClient->openExperiment(spec));
      cluster->experimentNames.push_back(spec.name);
      KILN_RETURN_IF_ERROR(cluster->operatorClient->waitForExperiment(spec.name, 1, 30s).status());
      options.experiment = spec.name;
      options.experimentKey = opened.key;
      cluster->places.push_back({});
      cluster->warm.push_back({{}});
    } else if (layout == Layout::kDedicated) {
      cluster->places.push_back({workers.at(i)});
      cluster->warm.push_back({{workers.at(i)}});
    } else {
      cluster->places.push_back({});
      std::vector<LearnerPlace> every;
      for (const auto& w : workers) every.push_back({w});
      cluster->warm.push_back(every);
    }
    cluster->clients.push_back(options);
  }
  return cluster;
}

// Parses every benchmark and computes its -Oz baseline once on each place an
// experiment may use, so that no layout pays for that in its timed run.
Status warmUp(client::Client& client, const LearnerSettings& settings,
              const std::vector<LearnerPlace>& places) {
  for (const LearnerPlace& place : places) {
    for (const std::string& uri : settings.benchmarks) {
      client::SessionOptions options{"llvm", uri};
      options.actionSpace = "PassesAll";
      options.observations = {"Autophase", "IrInstructionCount", "IrInstructionCountOz"};
      KILN_ASSIGN_OR_RETURN(auto session, place.endpoint.empty()
                                              ? client.startSession(options)
                                              : client.startSessionOn(place.endpoint, options));
      KILN_RETURN_IF_ERROR(session->end());
    }
  }
  return okStatus();
}

struct Running {
  std::unique_ptr<client::Client> client;
  std::unique_ptr<PassOrderingLearner> learner;
  LearnerProgress progress;
  Status status;
  double start = 0;  // seconds after the layout's t0
};

// Samples the learners' phases and the slots the cluster reports busy, and
// draws the progress lines when `out` is given.
void watch(LayoutCluster& cluster, Layout layout, const LearningDemoOptions& o,
           std::vector<std::unique_ptr<Running>>& runs, std::FILE* out, LayoutResult& result,
           std::atomic<bool>& stop, SteadyTime::time_point t0) {
  client::ClientOptions options = cluster.base;
  options.requestTimeout = 5s;
  auto client = client::Client::connect(options);
  bool tty = out != nullptr && ::isatty(::fileno(out)) != 0;
  std::vector<Phase> shown(runs.size(), Phase::kStarting);
  bool drawn = false;
  auto nextStatus = SteadyTime::now();
  std::map<std::string, double> busy;  // by experiment name or worker endpoint
  double total = 0;
  while (!stop.load()) {
    if (client.ok() && SteadyTime::now() >= nextStatus) {
      nextStatus = SteadyTime::now() + 100ms;
      if (auto status = (*client)->clusterStatus(); status.ok()) {
        busy.clear();
        total = 0;
        // A nesting host's slots are its experiments' workers' (counted once).
        for (const auto& experiment : status->experiments) {
          for (const auto& worker : experiment.workers) {
            busy[experiment.spec.name] += worker.load.busySlots;
            if (layout == Layout::kNested) total += worker.load.busySlots;
          }
        }
        for (const auto& worker : status->workers) {
          busy[worker.endpoint] += worker.busySlots;
          if (layout != Layout::kNested) total += worker.busySlots;
        }
      }
    }
    Sample sample;
    sample.seconds = std::chrono::duration<double>(SteadyTime::now() - t0).count();
    sample.totalBusy = total;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      double mine = 0;
      if (layout == Layout::kNested) mine = busy[o.experiments[i].name];
      if (layout == Layout::kDedicated) mine = busy[cluster.places[i].endpoint];
      sample.busySlots.push_back(mine);
      sample.phases.push_back(runs[i]->progress.phase.load());
    }
    result.samples.push_back(std::move(sample));
    if (out != nullptr) {
      if (tty && drawn) fmt::print(out, "\033[{}A", runs.size());
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& p = runs[i]->progress;
        const unsigned iterations = o.experiments[i].iterations;
        Phase now = p.phase.load();
        if (tty) {
          fmt::print(out, "\r\033[K  {:<8} [{}] iteration {:>3}/{:<3} {:<13} {} steps\n",
                     o.experiments[i].name, progressBar(p.iteration, iterations),
                     p.iteration.load(), iterations, phaseName(now), p.steps.load());
        } else if (now != shown[i]) {
          shown[i] = now;
          fmt::print(out, "  {:<8} iteration {} {}\n", o.experiments[i].name, p.iteration.load(),
                     phaseName(now));
        }
      }
      drawn = true;
      std::fflush(out);
    }
    std::this_thread::sleep_for(50ms);
  }
}

// The worker hosts' CPU seconds so far, where they are budgeted (0 if not).
double budgetedCpuSeconds(const LayoutCluster& cluster) {
  double seconds = 0;
  for (const auto& group : cluster.budgets) seconds += group->cpuSeconds();
  return seconds;
}

Result<LayoutResult> runLayout(Layout layout, const LearningDemoOptions& o,
                               const std::optional<CpuBudgetSupport>& support, unsigned slots,
                               std::FILE* progress) {
  KILN_ASSIGN_OR_RETURN(auto cluster, startLayout(layout, o, support, slots));
  std::vector<std::unique_ptr<Running>> runs;
  for (std::size_t i = 0; i < o.experiments.size(); ++i) {
    auto run = std::make_unique<Running>();
    KILN_ASSIGN_OR_RETURN(run->client, client::Client::connect(cluster->clients[i]));
    KILN_RETURN_IF_ERROR(warmUp(*run->client, o.experiments[i], cluster->warm[i]));
    KILN_ASSIGN_OR_RETURN(run->learner, PassOrderingLearner::open(*run->client, o.experiments[i],
                                                                  cluster->places[i]));
    runs.push_back(std::move(run));
  }
  LayoutResult result;
  result.layout = layout;
  result.slots = slots;
  result.hostBudget = cluster->budgetNote;
  result.budgetCpus = cluster->budgets.empty() ? 0 : workerCpus(o);
  std::atomic<bool> stop{false}, cancelled{false};
  std::vector<std::atomic<bool>> cue(runs.size());
  for (auto& c : cue) c = false;
  const double cpu0 = processCpuSeconds(), workerCpu0 = budgetedCpuSeconds(*cluster);
  const auto t0 = SteadyTime::now();
  std::thread watcher([&] { watch(*cluster, layout, o, runs, progress, result, stop, t0); });
  // Each experiment starts when the one before it begins its first update,
  // so that one collects while the other trains, in every layout alike.
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) {
      const auto deadline = SteadyTime::now() + 300s;
      while (!cue[i - 1].load() && !cancelled.load() && SteadyTime::now() < deadline)
        std::this_thread::sleep_for(5ms);
    }
    runs[i]->learner->notifyFirstUpdate(&cue[i]);
    runs[i]->start = std::chrono::duration<double>(SteadyTime::now() - t0).count();
    threads.emplace_back([&, i] {
      runs[i]->status = runs[i]->learner->run(t0, runs[i]->progress, cancelled);
      if (!runs[i]->status.ok()) cancelled = true;
    });
  }
  for (auto& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(SteadyTime::now() - t0).count();
  result.cpuSeconds = processCpuSeconds() - cpu0;
  result.workerCpuSeconds = budgetedCpuSeconds(*cluster) - workerCpu0;
  stop = true;
  watcher.join();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]->status.ok()) {
      return Status(runs[i]->status.code(),
                    fmt::format("experiment {} ({} layout): {}", o.experiments[i].name,
                                layoutName(layout), runs[i]->status.message()));
    }
    result.starts.push_back(runs[i]->start);
    result.records.push_back(runs[i]->learner->records());
  }
  if (layout == Layout::kNested) {
    for (std::size_t i = 0; i < runs.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(auto episodes, runs[i]->learner->greedyEpisodes());
      result.greedy.push_back(std::move(episodes));
    }
  }
  runs.clear();  // the sessions end before their cluster
  return result;
}

}  // namespace

std::vector<LearnerSettings> defaultLearners(const std::vector<std::string>& benchmarks,
                                             bool quick) {
  LearnerSettings a;
  a.name = "ppo-a";
  a.seed = 1;
  a.benchmarks = benchmarks;
  for (const std::string& uri : defaultHeldOut()) {
    if (std::find(benchmarks.begin(), benchmarks.end(), uri) == benchmarks.end()) {
      a.heldOut.push_back(uri);
    }
  }
  a.envs = 4;
  a.horizon = 8;
  a.rollout = 16;
  a.iterations = quick ? 4 : 12;
  a.ppo.hidden = 256;
  a.ppo.learningRate = 3e-4f;
  a.ppo.epochs = quick ? 4 : 10;
  a.ppo.minibatch = 32;
  LearnerSettings b = a;
  b.name = "ppo-b";
  b.seed = 2;
  b.ppo.learningRate = 1e-3f;
  b.ppo.entropyCoefficient = 0.02f;
  return {a, b};
}

Status runLearningDemo(const LearningDemoOptions& o, std::FILE* out) {
  if (o.experiments.size() != 2) return invalidArgument("the demo runs two experiments");
  for (const auto& e : o.experiments) KILN_RETURN_IF_ERROR(validate(e));
  unsigned slots = o.slots != 0 ? o.slots : std::max(2u, std::thread::hardware_concurrency());
  slots -= slots % 2;  // the dedicated halves split them evenly
  std::vector<Layout> layouts = o.coordinator.empty() ? o.layouts : std::vector{Layout::kNested};
  if (layouts.empty() || layouts.front() != Layout::kNested) {
    return invalidArgument("the demo's first layout is the nested one");
  }
  if (o.coordinator.empty()) {
    fmt::print(out, "cluster: embedded single node; layouts in turn: {} ({} slots in all)\n",
               fmt::join(layouts | std::views::transform(layoutName), ", "), slots);
  } else {
    fmt::print(out, "cluster: {} (the nested layout alone)\n", o.coordinator);
  }
  for (const auto& e : o.experiments) {
    fmt::print(out,
               "experiment {}: PPO ({} hidden units, lr {}, entropy {}, {} epochs) on {} envs, "
               "{} iterations of {} steps, episodes of {} passes over {} benchmarks\n",
               e.name, e.ppo.hidden, e.ppo.learningRate, e.ppo.entropyCoefficient, e.ppo.epochs,
               e.envs, e.iterations, e.envs * e.rollout, e.horizon, e.benchmarks.size());
  }
  // Embedded layouts model separate machines: each worker host its own CPU
  // budget, the learners outside it (as on a cluster, where they train
  // elsewhere).
  std::optional<CpuBudgetSupport> support;
  if (o.coordinator.empty()) {
    KILN_ASSIGN_OR_RETURN(support, cpuBudgetsFor(o.budget));
  }
  if (support) {
    fmt::print(out,
               "machines: each worker host its own CPU budget, {:.2f} CPUs in all (each of the "
               "dedicated and shared layouts' two workers half, the nesting host all); the "
               "learners train outside it, as on a cluster; {}\n",
               workerCpus(o), support->note);
  } else if (o.coordinator.empty()) {
    fmt::print(out,
               "machines: none (--budget none): the hosts and the learners share every core, so "
               "the dedicated halves lend each other their idle CPU as separate machines could "
               "not\n");
  }
  LearningRecord record;
  record.experiments = o.experiments;
  for (Layout layout : layouts) {
    const bool main = layout == Layout::kNested;
    fmt::print(out, "\n{} layout{}\n", layoutName(layout),
               main ? ": one nesting host, each experiment's lulls filled by the other" : "");
    std::fflush(out);
    KILN_ASSIGN_OR_RETURN(LayoutResult result,
                          runLayout(layout, o, support, slots, main ? out : nullptr));
    fmt::print(out, "  {:.1f} s, {:.0f} env steps/s\n", result.seconds,
               totalSteps(result) / result.seconds);
    record.layouts.push_back(std::move(result));
  }
  const Comparison comparison = compare(record, std::max(1u, std::thread::hardware_concurrency()));
  printComparison(record, comparison, out);
  KILN_RETURN_IF_ERROR(writeLearningReport(record, comparison, o.report));
  if (!o.json.empty()) KILN_RETURN_IF_ERROR(writeLearningJson(record, comparison, o.json));
  fmt::print(out, "\nreport with the utilization timeline and the learning curves: {}\n", o.report);
  return okStatus();
}

}  // namespace kiln::demo
