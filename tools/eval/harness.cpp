#include "tools/eval/harness.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

#include <kiln/client/datasets.h>
#include <kiln/client/work_pool.h>
#include "tools/local_cluster/local_cluster.h"

namespace kiln::eval {
namespace {

using namespace std::chrono_literals;
using SteadyTime = std::chrono::steady_clock;

constexpr const char* kSessionType = "llvm";

struct Placement {
  client::ClientOptions options;  // for the runners: names the experiment, if one was opened
  unsigned slots = 0;
  std::string experiment;  // opened for this run; closed at its end
};

bool hostsLlvm(const client::WorkerStatus& worker) {
  for (const std::string& type : worker.sessionTypes) {
    if (type == kSessionType) return true;
  }
  return false;
}

// Where the units run: on plain workers that host the llvm type if there are
// any, else on an experiment opened over the nesting hosts.
Result<Placement> place(client::Client& operatorClient, client::ClientOptions options) {
  KILN_ASSIGN_OR_RETURN(auto workers, operatorClient.listCluster());
  Placement placement{options, 0, ""};
  unsigned nestingHosts = 0, nestingSlots = 0;
  for (const auto& worker : workers) {
    if (worker.nesting) {
      ++nestingHosts;
      nestingSlots += worker.slots;
    } else if (hostsLlvm(worker)) {
      placement.slots += worker.slots;
    }
  }
  if (placement.slots > 0) return placement;
  if (nestingHosts == 0) {
    return notFound(
        "no worker of this cluster hosts the llvm session type (build kiln with "
        "-DKILN_WITH_LLVM=ON, or start workers that do)");
  }
  ExperimentSpec spec;
  spec.name = fmt::format("kiln-eval-{}", ::getpid());
  spec.workers = nestingHosts;
  spec.sessionTypes = {kSessionType};
  KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, operatorClient.openExperiment(spec));
  KILN_RETURN_IF_ERROR(operatorClient.waitForExperiment(spec.name, 1, 30s).status());
  placement.options.experiment = spec.name;
  placement.options.experimentKey = opened.key;
  placement.slots = nestingSlots;
  placement.experiment = spec.name;
  return placement;
}

Result<std::vector<std::string>> resolveBenchmarks(client::Client& client, const EvalOptions& o) {
  std::vector<std::string> uris;
  for (const std::string& dataset : o.datasets) {
    if (!isDatasetUri(dataset)) {
      return invalidArgument(fmt::format(
          "'{}' is not a dataset URI (like benchmark://kiln-bench-v0 or generator://csmith-v0); "
          "give a single benchmark with --benchmark",
          dataset));
    }
    std::vector<std::string> members;
    if (isGeneratorUri(dataset)) {
      if (!o.generatorSeeds) {
        return invalidArgument(fmt::format(
            "{} generates a benchmark per seed: say which with --generator-seeds (e.g. 1-20)",
            dataset));
      }
      members = generatorBenchmarks(dataset, *o.generatorSeeds);
      if (o.perDataset != 0 && members.size() > o.perDataset) members.resize(o.perDataset);
    } else {
      std::size_t limit =
          o.perDataset != 0 ? o.perDataset : std::numeric_limits<std::size_t>::max();
      KILN_ASSIGN_OR_RETURN(members, client::listBenchmarks(client, dataset, limit));
      if (members.empty()) {
        return notFound(fmt::format(
            "dataset {} has no benchmarks on this cluster (`kiln datasets` lists what it has)",
            dataset));
      }
    }
    uris.insert(uris.end(), members.begin(), members.end());
  }
  uris.insert(uris.end(), o.benchmarks.begin(), o.benchmarks.end());
  uris = withoutRepeats(uris);
  if (uris.empty()) {
    return invalidArgument("nothing to evaluate: name a --dataset or a --benchmark");
  }
  return uris;
}

// Read back by position in startWithBaselines.
const std::vector<std::string> kBaselines = {"IrInstructionCount",   "IrInstructionCountO0",
                                             "IrInstructionCountOz", "ObjectTextSizeO0",
                                             "ObjectTextSizeOz",     "IrInstructionCountO3"};

Result<std::unique_ptr<client::Session>> startWithBaselines(client::Client& client,
                                                            BenchmarkResult& result) {
  client::SessionOptions options{kSessionType, result.benchmark};
  options.observations = kBaselines;
  KILN_ASSIGN_OR_RETURN(auto session, client.startSession(options));
  const auto& initial = session->initialObservations();
  if (initial.size() != kBaselines.size()) {
    return internalError("the llvm session returned no baselines");
  }
  result.instCountInitial = initial[0].as<std::int64_t>();
  result.instCountO0 = initial[1].as<std::int64_t>();
  result.instCountOz = initial[2].as<std::int64_t>();
  result.textSizeO0 = initial[3].as<std::int64_t>();
  result.textSizeOz = initial[4].as<std::int64_t>();
  result.instCountO3 = initial[5].as<std::int64_t>();
  return session;
}

// The best sequence measured again from scratch, with -O0's and -Oz's
// figures, and validated unless the run says not to.
Status measure(client::Client& client, BenchmarkResult& result, bool validate) {
  KILN_ASSIGN_OR_RETURN(auto session, startWithBaselines(client, result));
  std::vector<Value> actions(result.passes.begin(), result.passes.end());
  KILN_ASSIGN_OR_RETURN(auto stepped, session->step(actions, std::vector<std::string>{
                                                                 "IrInstructionCount",
                                                                 "ObjectTextSizeBytes", "IrSha1"}));
  result.instCount = stepped.observations.at(0).as<std::int64_t>();
  result.textSize = stepped.observations.at(1).as<std::int64_t>();
  result.irSha1 = stepped.observations.at(2).as<std::string>();
  const auto& names = session->spaces().actionSpaces.at(0).names;
  for (std::int64_t pass : result.passes) {
    if (pass < 0 || static_cast<std::size_t>(pass) >= names.size()) {
      return internalError(fmt::format("the search chose pass {} of {}", pass, names.size()));
    }
    result.passNames.push_back(names[static_cast<std::size_t>(pass)]);
  }
  if (validate) {
    auto verdict = validateSessionState(*session);
    if (!verdict.ok()) {
      return Status(verdict.status().code(),
                    "the final state could not be validated: " + verdict.status().message());
    }
    result.validation = std::move(verdict).value();
  }
  return session->end();
}

Result<BenchmarkResult> evaluateOne(client::WorkContext& context, const std::string& benchmark,
                                    const EvalOptions& o) {
  auto started = SteadyTime::now();
  // Only beam search tells states apart by their IR's hash.
  bool fingerprints = o.agent == AgentKind::kBeam;
  KILN_ASSIGN_OR_RETURN(auto scorer, SessionScorer::start(context.client, benchmark, o.budget,
                                                          context.cancelled, fingerprints));
  KILN_ASSIGN_OR_RETURN(SearchOutcome outcome, runAgent(o.agent, *scorer, o.agentOptions,
                                                        benchmarkSeed(o.seed, benchmark)));
  BenchmarkResult result;
  result.benchmark = benchmark;
  result.passes = std::move(outcome.best);
  result.queries = outcome.queries;
  result.steps = scorer->stepsUsed();
  scorer.reset();  // ends its sessions
  result.seconds = std::chrono::duration<double>(SteadyTime::now() - started).count();
  KILN_RETURN_IF_ERROR(measure(context.client, result, o.validate));
  return result;
}

// A benchmark whose search or measurement failed, scored at -O0 (report.h):
// its baselines from a session of its own. An error when even those cannot
// be had.
Result<BenchmarkResult> scoredAtO0(client::Client& client, const std::string& benchmark,
                                   Status failure) {
  BenchmarkResult result;
  result.benchmark = benchmark;
  result.failure = std::move(failure);
  KILN_ASSIGN_OR_RETURN(auto session, startWithBaselines(client, result));
  (void)session->end();
  return result;
}

}  // namespace

Result<EvalReport> runEval(const EvalOptions& o, const EvalProgress& progress) {
  if (o.budget.steps == 0 && o.budget.seconds.count() <= 0) {
    return invalidArgument("an evaluation needs a step or a time budget per benchmark");
  }
  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  clientOptions.keys = o.keys;
  std::unique_ptr<LocalCluster> cluster;
  if (!clientOptions.coordinator.empty() && !o.servedDatasets.empty()) {
    return invalidArgument(fmt::format(
        "dataset '{}': a corpus directory is served by the embedded cluster only; a cluster's "
        "workers serve the corpora their operator gives them (kiln worker --dataset NAME=DIR)",
        o.servedDatasets.front().name));
  }
  if (clientOptions.coordinator.empty()) {
    LocalClusterOptions local;
    local.workers = 1;
    // A pass that crashes on one benchmark (LLVM bugs exist) costs a worker
    // restart and a replay, not a hung or lying evaluation.
    local.isolateWorkers = true;
    local.worker.slots = o.slots != 0 ? o.slots : std::max(2u, std::thread::hardware_concurrency());
    local.worker.allowFiles = o.allowFiles;
    local.worker.settings.datasets = o.servedDatasets;
    local.keys = o.keys;
    KILN_ASSIGN_OR_RETURN(cluster, LocalCluster::start(local));
    KILN_RETURN_IF_ERROR(cluster->waitUntilReady(10s));
    clientOptions.coordinator = cluster->coordinatorEndpoint();
  }
  KILN_ASSIGN_OR_RETURN(auto operatorClient, client::Client::connect(clientOptions));
  KILN_ASSIGN_OR_RETURN(Placement placement, place(*operatorClient, clientOptions));
  KILN_ASSIGN_OR_RETURN(auto benchmarks, resolveBenchmarks(*operatorClient, o));

  EvalReport report;
  report.agent = std::string(agentName(o.agent));
  report.seed = o.seed;
  report.stepBudget = o.budget.steps;
  report.timeBudget = o.budget.seconds.count();
  report.validated = o.validate;
  report.parallel = std::max(1u, std::min<unsigned>(o.parallel != 0 ? o.parallel : placement.slots,
                                                    static_cast<unsigned>(benchmarks.size())));
  auto started = SteadyTime::now();
  {
    KILN_ASSIGN_OR_RETURN(auto pool, client::WorkPool::create(placement.options, report.parallel));
    std::mutex progressMutex;
    std::size_t done = 0;
    std::vector<std::future<Result<BenchmarkResult>>> units;
    for (const std::string& benchmark : benchmarks) {
      units.push_back(pool->submit<BenchmarkResult>([&, benchmark](client::WorkContext& context) {
        auto result = evaluateOne(context, benchmark, o);
        if (!result.ok()) result = scoredAtO0(context.client, benchmark, result.status());
        std::lock_guard lock(progressMutex);
        ++done;
        if (progress) progress(done, benchmarks.size(), benchmark);
        return result;
      }));
    }
    for (std::size_t i = 0; i < units.size(); ++i) {
      auto result = units[i].get();
      if (result.ok()) {
        report.results.push_back(std::move(result).value());
      } else {
        report.failures.push_back({benchmarks[i], result.status()});
      }
    }
  }
  report.seconds = std::chrono::duration<double>(SteadyTime::now() - started).count();
  if (!placement.experiment.empty()) (void)operatorClient->closeExperiment(placement.experiment);
  return report;
}

}  // namespace kiln::eval
