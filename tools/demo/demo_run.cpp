#include "tools/demo/demo_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

#include <kiln/client/work_pool.h>
#include "tools/demo/timeline.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::demo {
namespace {

using SteadyTime = std::chrono::steady_clock;
using namespace std::chrono_literals;

using SearchFn = Result<SearchResult> (*)(client::Client&, const std::string&, const SearchBudget&,
                                          std::uint64_t, const std::atomic<bool>&);

struct ExperimentRun {
  std::string name;
  std::string key;  // the experiment's key, for the clients that act for it
  SearchFn search;
  std::unique_ptr<client::WorkPool> pool;
  std::atomic<unsigned> done{0};
  std::atomic<unsigned> total{0};
  std::atomic<unsigned> round{0};
  std::atomic<Phase> phase{Phase::kStarting};
  std::atomic<std::uint64_t> steps{0};
  std::mutex mutex;  // guards best and status
  std::map<std::string, SearchResult> best;
  Status status;
};

// One experiment: rounds of collection (a unit per benchmark) and lulls.
void runExperiment(ExperimentRun& run, const DemoOptions& o,
                   const std::vector<std::string>& benchmarks, std::atomic<bool>& firstLull) {
  for (unsigned round = 0; round < o.rounds; ++round) {
    run.round = round + 1;
    run.phase = Phase::kCollecting;
    auto started = SteadyTime::now();
    std::vector<std::future<Result<SearchResult>>> units;
    for (std::size_t b = 0; b < benchmarks.size(); ++b) {
      std::uint64_t seed = 1000003ull * (round + 1) + b;
      units.push_back(run.pool->submit<SearchResult>(
          [&run, &o, benchmark = benchmarks[b], seed](client::WorkContext& context) {
            auto result = run.search(context.client, benchmark, o.budget, seed, context.cancelled);
            if (result.ok()) run.steps += result->steps;
            ++run.done;
            return result;
          }));
    }
    run.total += static_cast<unsigned>(units.size());
    for (auto& unit : units) {
      auto result = unit.get();
      std::lock_guard lock(run.mutex);
      if (!result.ok()) {
        if (run.status.ok()) run.status = result.status();
        continue;
      }
      auto found = run.best.find(result->benchmark);
      if (found == run.best.end()) {
        run.best.emplace(result->benchmark, *result);
      } else {
        found->second = better(found->second, *result);
      }
    }
    if (!run.status.ok()) break;
    if (round + 1 == o.rounds) break;
    // Training lull: as long as this round's collection.
    run.phase = Phase::kLull;
    firstLull = true;
    std::this_thread::sleep_for((SteadyTime::now() - started) * o.lullFactor);
  }
  run.phase = Phase::kDone;
  firstLull = true;
}

// Samples utilization from the coordinator and draws the progress bars.
void watch(client::ClientOptions options, std::vector<std::unique_ptr<ExperimentRun>>& runs,
           unsigned rounds, std::FILE* out, DemoRecord& record, std::atomic<bool>& stop,
           SteadyTime::time_point t0) {
  options.requestTimeout = 5s;
  auto client = client::Client::connect(options);
  bool tty = ::isatty(::fileno(out)) != 0;
  std::vector<Phase> shown(runs.size(), Phase::kStarting);
  bool drawn = false;
  while (!stop.load()) {
    Sample sample;
    sample.seconds = std::chrono::duration<double>(SteadyTime::now() - t0).count();
    std::map<std::string, double> busy;
    if (client.ok()) {
      if (auto status = (*client)->clusterStatus(); status.ok()) {
        for (const auto& experiment : status->experiments) {
          for (const auto& worker : experiment.workers) {
            busy[experiment.spec.name] += worker.load.busySlots;
          }
        }
      }
    }
    for (auto& run : runs) {
      sample.busySlots.push_back(busy[run->name]);
      sample.phases.push_back(run->phase.load());
    }
    record.samples.push_back(std::move(sample));
    if (tty) {
      if (drawn) fmt::print(out, "\033[{}A", runs.size());
      for (auto& run : runs) {
        fmt::print(out, "\r\033[K  {:<14} [{}] {:>3}/{:<3} units  round {}/{}  {:<13} {} steps\n",
                   run->name, progressBar(run->done, run->total), run->done.load(),
                   run->total.load(), run->round.load(), rounds, phaseName(run->phase),
                   run->steps.load());
      }
      drawn = true;
    } else {
      for (std::size_t i = 0; i < runs.size(); ++i) {
        Phase now = runs[i]->phase.load();
        if (now == shown[i]) continue;
        shown[i] = now;
        fmt::print(out, "  {:<14} round {} {} ({} units done)\n", runs[i]->name,
                   runs[i]->round.load(), phaseName(now), runs[i]->done.load());
      }
    }
    std::fflush(out);
    std::this_thread::sleep_for(250ms);
  }
}

Result<FinalRow> evaluate(client::Client& client, const SearchResult& best,
                          const std::string& foundBy) {
  client::SessionOptions options{"llvm", best.benchmark};
  options.actionSpace = "PassesAll";
  options.observations = {"ObjectTextSizeOz"};
  KILN_ASSIGN_OR_RETURN(auto session, client.startSession(options));
  FinalRow row{best, foundBy};
  row.textSizeOz = session->initialObservations().at(0).as<std::int64_t>();
  std::vector<Value> actions(best.passes.begin(), best.passes.end());
  KILN_ASSIGN_OR_RETURN(auto stepped,
                        session->step(actions, std::vector<std::string>{"ObjectTextSizeBytes",
                                                                        "IrInstructionCount"}));
  row.textSize = stepped.observations.at(0).as<std::int64_t>();
  row.best.instCount = stepped.observations.at(1).as<std::int64_t>();
  const auto& names = session->spaces().actionSpaces.at(0).names;
  for (std::int64_t pass : best.passes) row.passNames.push_back(names.at(pass));
  KILN_RETURN_IF_ERROR(session->end());
  return row;
}

}  // namespace

std::vector<std::string> defaultBenchmarks() {
  return {"benchmark://kiln-bench-v0/crc32",  "benchmark://kiln-bench-v0/huffman",
          "benchmark://kiln-bench-v0/bfs",    "benchmark://kiln-bench-v0/json_tokenizer",
          "benchmark://kiln-bench-v0/matmul", "benchmark://kiln-bench-v0/quicksort",
          "generator://csmith-v0/1",          "generator://csmith-v0/2"};
}

std::vector<std::string> defaultHeldOut() {
  return {"benchmark://kiln-bench-v0/sieve", "benchmark://kiln-bench-v0/dijkstra",
          "benchmark://kiln-bench-v0/lz77", "generator://csmith-v0/3"};
}

Status runDemo(const DemoOptions& o, std::FILE* out) {
  unsigned slots = o.slots != 0 ? o.slots : std::max(2u, std::thread::hardware_concurrency());
  std::unique_ptr<LocalCluster> cluster;
  std::string coordinator = o.coordinator;
  if (coordinator.empty()) {
    LocalClusterOptions local;
    local.workers = 0;
    local.nestingHosts = 1;
    local.worker.slots = slots;
    local.coordinator.heartbeatInterval = 250ms;
    local.worker.link.heartbeatInterval = 250ms;
    local.keys = o.keys;
    local.worker.allowFiles = o.allowFiles;
    KILN_ASSIGN_OR_RETURN(cluster, LocalCluster::start(local));
    KILN_RETURN_IF_ERROR(cluster->waitUntilReady(10s));
    coordinator = cluster->coordinatorEndpoint();
    fmt::print(out,
               "cluster: embedded single node (coordinator {} and one nesting host with {} "
               "slots on loopback)\n",
               coordinator, slots);
  } else {
    fmt::print(out, "cluster: {}\n", coordinator);
  }
  std::vector<std::string> benchmarks = o.benchmarks.empty() ? defaultBenchmarks() : o.benchmarks;

  std::vector<std::unique_ptr<ExperimentRun>> runs;
  runs.push_back(std::make_unique<ExperimentRun>());
  runs.back()->name = "random-search";
  runs.back()->search = randomSearch;
  runs.push_back(std::make_unique<ExperimentRun>());
  runs.back()->name = "greedy-search";
  runs.back()->search = greedySearch;

  client::ClientOptions operatorOptions;
  operatorOptions.coordinator = coordinator;
  operatorOptions.keys = o.keys;
  operatorOptions.requestTimeout = 60s;
  KILN_ASSIGN_OR_RETURN(auto operatorClient, client::Client::connect(operatorOptions));
  if (auto spaces = operatorClient->getSpaces("llvm"); !spaces.ok()) {
    return notFound(
        fmt::format("this cluster serves no 'llvm' session type ({}); build with "
                    "-DKILN_WITH_LLVM=ON, or try `kiln demo --noop`",
                    spaces.status().message()));
  }
  for (auto& run : runs) {
    ExperimentSpec spec;
    spec.name = run->name;
    spec.workers = 1;
    spec.sessionTypes = {"llvm"};
    KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, operatorClient->openExperiment(spec));
    KILN_RETURN_IF_ERROR(operatorClient->waitForExperiment(spec.name, 1, 30s).status());
    run->key = opened.key;
    client::ClientOptions options = operatorOptions;
    options.experiment = run->name;
    options.experimentKey = run->key;
    KILN_ASSIGN_OR_RETURN(run->pool, client::WorkPool::create(options, slots));
  }
  fmt::print(out,
             "experiments: random-search and greedy-search over {} benchmarks, {} rounds "
             "each, training lulls as long as a round\n\n",
             benchmarks.size(), o.rounds);

  DemoRecord record;
  record.slots = slots;
  for (auto& run : runs) record.experiments.push_back(run->name);
  auto t0 = SteadyTime::now();
  std::atomic<bool> stop{false}, firstLull{false}, unused{false};
  std::thread watcher([&] { watch(operatorOptions, runs, o.rounds, out, record, stop, t0); });
  // The second experiment starts when the first one enters its first lull,
  // so that their collections interleave.
  std::thread first([&] { runExperiment(*runs[0], o, benchmarks, firstLull); });
  auto waitUntil = SteadyTime::now() + 120s;
  while (!firstLull.load() && SteadyTime::now() < waitUntil) std::this_thread::sleep_for(20ms);
  std::thread second([&] { runExperiment(*runs[1], o, benchmarks, unused); });
  first.join();
  second.join();
  stop = true;
  watcher.join();
  record.seconds = std::chrono::duration<double>(SteadyTime::now() - t0).count();
  for (auto& run : runs) {
    if (!run->status.ok()) {
      return Status(run->status.code(),
                    fmt::format("experiment {}: {}", run->name, run->status.message()));
    }
  }

  // The best of both experiments per benchmark, measured once more on the
  // first experiment's workers (a cluster of nesting hosts has no others).
  client::ClientOptions evaluationOptions = operatorOptions;
  evaluationOptions.experiment = runs[0]->name;
  evaluationOptions.experimentKey = runs[0]->key;
  KILN_ASSIGN_OR_RETURN(auto evaluator, client::Client::connect(evaluationOptions));
  fmt::print(out, "\n{:<40} {:<14} {:>6} {:>9} {:>8} {:>9} {:>9} {:>8}\n", "BENCHMARK", "FOUND BY",
             "PASSES", "IR INSTS", "vs -Oz", ".TEXT B", "-Oz B", "vs -Oz");
  for (const std::string& benchmark : benchmarks) {
    const SearchResult* best = nullptr;
    std::string foundBy;
    for (auto& run : runs) {
      auto found = run->best.find(benchmark);
      if (found == run->best.end()) continue;
      if (best == nullptr || &better(*best, found->second) == &found->second) {
        best = &found->second;
        foundBy = run->name;
      }
    }
    if (best == nullptr) continue;
    KILN_ASSIGN_OR_RETURN(FinalRow row, evaluate(*evaluator, *best, foundBy));
    fmt::print(out, "{:<40} {:<14} {:>6} {:>9} {:>+7.1f}% {:>9} {:>9} {:>+7.1f}%\n", benchmark,
               foundBy, row.best.passes.size(), row.best.instCount,
               percentBetter(row.best.instCount, row.best.instCountOz), row.textSize,
               row.textSizeOz, percentBetter(row.textSize, row.textSizeOz));
    record.rows.push_back(std::move(row));
  }
  fmt::print(out, "(positive: smaller than -Oz)\n");
  for (auto& run : runs) {
    (void)operatorClient->closeExperiment(run->name);
    run->pool.reset();
  }
  KILN_RETURN_IF_ERROR(writeHtmlReport(record, o.report));
  fmt::print(out, "\nfinished in {:.1f} s; report with the utilization timeline: {}\n",
             record.seconds, o.report);
  return okStatus();
}

}  // namespace kiln::demo
