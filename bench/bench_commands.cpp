// The benchmarks of kiln-bench (`kiln bench <name>`): each prints its figures
// as a table, or as JSON with --json. One function per benchmark.
#include <fmt/format.h>

#include "bench/chaos_bench.h"
#include "bench/cluster_bench.h"
#include "bench/coordinator_bench.h"
#include "bench/link_switch.h"
#include "bench/nesting_bench.h"
#include "bench/rtt_bench.h"
#include "bench/soak_bench.h"
#include "bench/socket_floor.h"
#ifdef KILN_WITH_LLVM_BENCH
#include "bench/actions_bench.h"
#include "bench/affinity_bench.h"
#include "bench/datasets_bench.h"
#include "bench/llvm_bench.h"
#include "bench/runtime_bench.h"
#include "bench/tools_bench.h"
#endif
#ifdef KILN_WITH_MLGO_BENCH
#include "bench/mlgo_baseline.h"
#include "bench/mlgo_bench.h"
#endif
#include "bench/bench_commands.h"

namespace kiln::bench {

namespace {

void printOrFail(const Result<Report>& report, bool json) {
  if (!report.ok()) {
    fmt::print(stderr, "benchmark failed: {}\n", report.status().toString());
    throw CLI::RuntimeError(1);
  }
  report->print(json);
}

void addRttBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* rtt = app.add_subcommand("rtt", "noop step round trip, throughput and memory");
  auto rttOptions = std::make_shared<RttOptions>();
  rtt->add_option("--iterations", rttOptions->iterations, "round trips per measurement")
      ->capture_default_str();
  rtt->add_option("--idle-sessions", rttOptions->idleSessions, "sessions for the memory figure")
      ->capture_default_str();
  rtt->add_option("--slots", rttOptions->slots, "worker slots")->capture_default_str();
  rtt->add_flag("!--no-pinned", rttOptions->pinned, "skip the run pinned to CPU 0");
  rtt->add_flag("--force-tcp", rttOptions->forceTcp,
                "kiln steps over TCP even though the worker is on this host (no ipc://)");
  rtt->add_flag("--json", *json, "print the figures as JSON");
  rtt->callback([rttOptions, json] { printOrFail(runRttBench(*rttOptions), *json); });
}

void addNestingBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* nesting = app.add_subcommand(
      "nesting",
      "experiments with training lulls: dedicated slots vs one shared pool vs one kiln nest host");
  auto nestingOptions = std::make_shared<NestingOptions>();
  nesting
      ->add_option("--experiments", nestingOptions->experimentCounts,
                   "experiment counts to run, e.g. 2,4 (each a set of layouts)")
      ->delimiter(',')
      ->capture_default_str();
  nesting->add_option("--slots", nestingOptions->slots, "total slots (0 = cores, at least K)")
      ->capture_default_str();
  nesting
      ->add_option("--work", nestingOptions->work,
                   "busy (calibrated noop steps), llvm (pass-ordering episodes on kiln-bench-v0) "
                   "or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"busy", "llvm", "both"}));
  nesting
      ->add_option("--steps", nestingOptions->busySteps,
                   "busy steps per experiment and collection phase")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  nesting
      ->add_option("--llvm-steps", nestingOptions->llvmSteps,
                   "llvm steps per experiment and collection phase")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  nesting->add_option("--phases", nestingOptions->phases, "collection phases per experiment")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  nesting->add_option("--busy-us", nestingOptions->busyMicros, "compile time of one busy step")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  nesting->add_option("--passes-per-step", nestingOptions->passesPerStep, "llvm passes per step")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  nesting->add_option("--episode-steps", nestingOptions->episodeSteps, "llvm steps per episode")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  nesting
      ->add_option("--sessions-per-slot", nestingOptions->sessionsPerSlot,
                   "sessions per slot an experiment may use (steps queued behind the running one)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  nesting
      ->add_option("--lulls", nestingOptions->lulls,
                   "training lulls to run, as fractions of an experiment's time on its dedicated "
                   "machine, e.g. 0.25,0.5 (each a set of layouts)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.95));
  nesting
      ->add_option("--worker-cpus", nestingOptions->workerCpus,
                   "CPUs of every worker host together (0 = 40% of the cores; the learners get "
                   "80% of the cores less these, the coordinator and clients the rest)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4096.0));
  nesting
      ->add_option("--budget", nestingOptions->budget,
                   "how each host's CPU budget is enforced: auto, cgroup-v2, cgroup-v1, affinity "
                   "or none (hosts share every core)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cgroup-v2", "cgroup-v1", "affinity", "none"}));
  auto sweep = std::make_shared<bool>(false);
  nesting->add_flag("--sweep", *sweep,
                    "llvm work at lulls 0.25, 0.5 and 0.75 with 2, 4 and 8 experiments");
  nesting->add_flag("--json", *json, "print the figures as JSON");
  nesting->callback([nestingOptions, json, sweep] {
    if (*sweep) {
      nestingOptions->work = "llvm";
      nestingOptions->lulls = {0.25, 0.5, 0.75};
      nestingOptions->experimentCounts = {2, 4, 8};
    }
    printOrFail(runNestingBench(*nestingOptions), *json);
  });
}

#ifdef KILN_WITH_MLGO_BENCH
void addMlgoBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* mlgo =
      app.add_subcommand("mlgo", "MLGO inlining decisions/s via kiln vs direct; -Oz jobs/s");
  auto mlgoOptions = std::make_shared<MlgoBenchOptions>();
  mlgo->add_option("--repetitions", mlgoOptions->repetitions, "episodes per program and path")
      ->capture_default_str();
  mlgo->add_option("--jobs", mlgoOptions->jobs, "-Oz compile jobs")->capture_default_str();
  mlgo->add_option("--slots", mlgoOptions->slots, "worker slots (jobs in flight)")
      ->capture_default_str();
  mlgo->add_option("--program", mlgoOptions->programs, "benchmark URIs for the decision figures");
  mlgo->add_flag("!--no-pinned", mlgoOptions->pinned, "skip the run pinned to CPU 0");
  auto baseline = std::make_shared<bool>(false);
  auto baselineOptions = std::make_shared<MlgoBaselineOptions>();
  mlgo->add_flag("--baseline", *baseline,
                 "instead: what an agent answering DefaultAdvice is judged against, per module "
                 "set, before and after issue 42; fails unless every such agent earns 0");
  mlgo->add_option("--csmith", baselineOptions->csmithSeeds, "--baseline: csmith-v0 seeds 1..N")
      ->capture_default_str();
  auto corpora = std::make_shared<std::vector<std::string>>();
  mlgo->add_option("--dataset", *corpora,
                   "--baseline: also a corpus NAME=DIR, e.g. debian-mini (repeatable)");
  mlgo->add_option("--max-modules", baselineOptions->maxCorpusModules,
                   "--baseline: the first N modules of each corpus (0 = all)")
      ->capture_default_str();
  mlgo->add_flag("--json", *json, "print the figures as JSON");
  mlgo->callback([mlgoOptions, baseline, baselineOptions, corpora, json] {
    if (!*baseline) return printOrFail(runMlgoBench(*mlgoOptions), *json);
    for (const std::string& corpus : *corpora) {
      Result<OperatorDataset> parsed = parseDatasetFlag(corpus, std::filesystem::current_path());
      if (!parsed.ok()) throw CLI::ValidationError("--dataset", parsed.status().message());
      baselineOptions->corpora.push_back(*parsed);
    }
    Result<Report> report = runMlgoBaselineBench(*baselineOptions);
    printOrFail(report, *json);
    Status verdict = baselineVerdict(*report);
    if (!verdict.ok()) {
      fmt::print(stderr, "benchmark failed: {}\n", verdict.toString());
      throw CLI::RuntimeError(1);
    }
  });
}

#endif
#ifdef KILN_WITH_LLVM_BENCH
void addLlvmBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* llvm = app.add_subcommand(
      "llvm", "llvm session step/fork/start latency vs an opt-19 process per step; memory");
  auto llvmOptions = std::make_shared<LlvmBenchOptions>();
  llvm->add_option("--iterations", llvmOptions->iterations, "samples per step/fork figure")
      ->capture_default_str();
  llvm->add_option("--start-iterations", llvmOptions->startIterations,
                   "samples per StartSession figure")
      ->capture_default_str();
  llvm->add_option("--opt-runs", llvmOptions->optRuns, "opt-19 processes per pass and benchmark")
      ->capture_default_str();
  llvm->add_option("--small", llvmOptions->smallBenchmark, "the small benchmark's URI")
      ->capture_default_str();
  llvm->add_option("--pass", llvmOptions->passes, "passes whose steps are measured")
      ->capture_default_str();
  llvm->add_option("--csmith-seed", llvmOptions->csmithSeed, "first csmith seed to try")
      ->capture_default_str();
  llvm->add_option("--live-sessions", llvmOptions->liveSessions, "sessions for the memory figure")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  llvm->add_option("--slots", llvmOptions->slots, "worker slots")->capture_default_str();
  llvm->add_option("--opt", llvmOptions->opt, "the opt binary of the reference")
      ->capture_default_str();
  llvm->add_flag("!--no-pinned", llvmOptions->pinned, "skip the run pinned to CPU 0");
  llvm->add_flag("--force-tcp", llvmOptions->forceTcp,
                 "steps over TCP even though the worker is on this host (no ipc://)");
  llvm->add_flag("--json", *json, "print the figures as JSON");
  llvm->callback([llvmOptions, json] { printOrFail(runLlvmBench(*llvmOptions), *json); });
}

void addActionsBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* actions = app.add_subcommand(
      "actions", "random episodes over every action: invalid modules, crashes, per-pass cost");
  auto actionsOptions = std::make_shared<ActionsBenchOptions>();
  actions->add_option("--episodes", actionsOptions->episodes, "episodes")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000'000u));
  actions->add_option("--steps", actionsOptions->steps, "random actions per episode")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000u));
  actions->add_option("--csmith", actionsOptions->csmithPrograms, "csmith programs (seeds 1..N)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000u));
  actions->add_option("--seed", actionsOptions->seed, "seed of the random actions")
      ->capture_default_str();
  actions
      ->add_option("--max-seconds", actionsOptions->maxSeconds,
                   "stop starting episodes after this long (0 = no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  actions->add_flag("--validate", actionsOptions->validate,
                    "validation campaign: run every final state's program against -O0 on every "
                    "input; per pass, sequences tried and miscompiles found (--episodes "
                    "sequences, --steps per random episode)");
  actions->add_option("--threads", actionsOptions->threads, "--validate: sequences at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  actions->add_flag("--asan,!--no-asan", actionsOptions->asan,
                    "--validate: run the ASan build of every state too (default)");
  actions
      ->add_option("--llvm-stress", actionsOptions->llvmStressPrograms,
                   "--validate: llvm-stress modules (seeds 1..N; no main, shown excluded)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000u));
  actions->add_option("--put-back", actionsOptions->putBack,
                      "--validate: a registry pass that is no action, run as if it were");
  actions->add_option("--focus", actionsOptions->focus,
                      "--validate: plan sequences for this action only (repeatable)");
  actions->add_option("--program", actionsOptions->programs,
                      "--validate: only this program, e.g. kiln-bench-v0/bfs (repeatable)");
  actions->add_flag("--json", *json, "print the figures as JSON");
  actions->callback([actionsOptions, json] {
    actionsOptions->json = *json;
    printOrFail(runActionsBench(*actionsOptions), *json);
  });
}

void addRuntimeBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* runtimeBench = app.add_subcommand(
      "runtime", "sessions measuring a program's runtime at once vs each alone (RuntimeStats)");
  auto runtimeOptions = std::make_shared<RuntimeBenchOptions>();
  runtimeBench
      ->add_option("--program", runtimeOptions->programs, "kiln-bench-v0 programs (repeatable)")
      ->capture_default_str();
  runtimeBench
      ->add_option("--sessions", runtimeOptions->sessions,
                   "sessions measuring at once, besides alone (repeatable)")
      ->capture_default_str()
      ->check(CLI::Range(2u, 64u));
  runtimeBench->add_option("--runs", runtimeOptions->runs, "llvm.runtime_runs of a measurement")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  runtimeBench->add_option("--rounds", runtimeOptions->rounds, "measurements per session and level")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  runtimeBench
      ->add_option("--workers", runtimeOptions->workers,
                   "worker processes the sessions are spread over")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  runtimeBench->add_option("--worker-flag", runtimeOptions->workerFlags,
                           "a flag for every worker, e.g. --worker-flag=--runtime-cpus=2 "
                           "(repeatable)");
  runtimeBench->add_flag("--json", *json, "print the figures as JSON");
  runtimeBench->callback(
      [runtimeOptions, json] { printOrFail(runRuntimeBench(*runtimeOptions), *json); });
}

void addToolsBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* tools = app.add_subcommand(
      "tools", "agent tools: apply_passes calls/s and p50/p99 vs an opt-19 subprocess per call");
  auto options = std::make_shared<ToolsBenchOptions>();
  auto quick = std::make_shared<bool>(false);
  tools->add_option("--callers", options->callers, "concurrent callers of the N-caller rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  tools->add_option("--calls", options->callsPerCaller, "calls per caller and row")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  tools->add_option("--seconds", options->secondsPerRow, "at most this long per measurement")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  tools->add_option("--passes", options->passesPerCall, "passes per call")
      ->capture_default_str()
      ->check(CLI::Range(2u, 512u));
  tools->add_option("--shared-prefix", options->sharedPrefix, "passes a group's rollouts share")
      ->capture_default_str()
      ->check(CLI::Range(1u, 511u));
  tools->add_option("--rollouts", options->rolloutsPerGroup, "calls per shared prefix")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  tools->add_option("--workers", options->workers, "workers of each local cluster row")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  tools->add_option("--opt", options->opt, "the opt binary of the baseline")->capture_default_str();
  tools->add_option("--seed", options->seed, "seed of the pass lists")->capture_default_str();
  tools->add_flag("--quick", *quick, "a short run: 2 callers, 12 calls each, 3 s a measurement");
  tools->add_flag("--json", *json, "print the figures as JSON");
  tools->callback([options, quick, json] {
    ToolsBenchOptions o = *options;
    if (*quick) {
      ToolsBenchOptions q = quickToolsBenchOptions();
      o.callers = q.callers;
      o.callsPerCaller = q.callsPerCaller;
      o.secondsPerRow = q.secondsPerRow;
      o.rolloutsPerGroup = q.rolloutsPerGroup;
    }
    printOrFail(runToolsBench(o), *json);
  });
}

#endif
void addChaosBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* chaos = app.add_subcommand(
      "chaos", "sessions stepping while workers are SIGKILLed at random and replaced");
  auto chaosOptions = std::make_shared<ChaosOptions>();
  chaos->add_option("--sessions", chaosOptions->sessions, "sessions stepping")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  chaos->add_option("--workers", chaosOptions->cluster.workers, "worker processes")
      ->capture_default_str()
      ->check(CLI::Range(2u, 64u));
  chaos->add_option("--seconds", chaosOptions->seconds, "stepping time")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  chaos->add_option("--min-kill-seconds", chaosOptions->cluster.minPauseSeconds, "shortest pause")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 600.0));
  chaos->add_option("--max-kill-seconds", chaosOptions->cluster.maxPauseSeconds, "longest pause")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 600.0));
  chaos->add_option("--seed", chaosOptions->seed, "random seed (0 = random)");
  chaos
      ->add_option("--session-type", chaosOptions->sessionType,
                   "noop, or llvm (kiln-bench-v0 programs, random passes); with --episodes "
                   "also mlgo-inline")
      ->capture_default_str()
      ->check(CLI::IsMember({"noop", "llvm", "mlgo-inline"}));
  chaos
      ->add_option("--episodes", chaosOptions->episodes,
                   "the differential harness: this many seeded episodes run quiet, then again "
                   "under --fault, every reward and observation compared step by step (0 = the "
                   "stepping loop)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  chaos->add_option("--episode-length", chaosOptions->episodeLength, "actions per episode")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  chaos
      ->add_option("--fault", chaosOptions->fault,
                   "with --episodes: kill, crash (a neighbour's LLVM crash), coordinator, freeze "
                   "(a worker SIGSTOPped), partition (a worker host's cable pulled; needs root), "
                   "nest-child (an isolated nesting child killed)")
      ->capture_default_str()
      ->check(CLI::IsMember({"kill", "crash", "coordinator", "freeze", "partition", "nest-child"}));
  chaos
      ->add_option("--busy-us", chaosOptions->busyMicros,
                   "with --episodes: noop's busy time per action, so that faults land in steps")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  chaos
      ->add_option("--outage-seconds", chaosOptions->cluster.outageSeconds,
                   "--fault freeze or partition: how long a host is cut off")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 600.0));
  chaosOptions->cluster.crasherModule = "tests/llvm_engine/data/loop_bound_split_crash.ll";
  chaos
      ->add_option("--crasher-module", chaosOptions->cluster.crasherModule,
                   "--fault crash: the module on which loop-bound-split crashes LLVM 19")
      ->capture_default_str();
  chaos
      ->add_option("--heartbeat-seconds", chaosOptions->cluster.heartbeatSeconds,
                   "the coordinator's and workers' heartbeat interval (theirs by default: 1)")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 60.0));
  chaos->add_flag("--same-endpoints", chaosOptions->sameEndpoints,
                  "start each replacement on the address of the worker it replaces");
  chaos
      ->add_option("--request-seconds", chaosOptions->cluster.requestSeconds,
                   "the client's request timeout, and so each restore's deadline (0 = the "
                   "client's default, 60, as a user's script has)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  chaos->add_flag("--json", *json, "print the figures as JSON");
  chaos->callback([chaosOptions, json] {
    ChaosFigures figures;
    printOrFail(runChaosBench(*chaosOptions, &figures), *json);
    if (figures.lost != 0 || figures.mismatched != 0 || figures.diedOnTheirOwn != 0 ||
        figures.rewardMismatches != 0 || figures.observationMismatches != 0 ||
        figures.outcomeMismatches != 0 || (chaosOptions->episodes > 0 && figures.kills == 0)) {
      throw CLI::RuntimeError(2);
    }
  });
}

void addClusterBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* cluster = app.add_subcommand(
      "cluster",
      "kiln across hosts: network namespaces with emulated links, step and placement round "
      "trips against a raw TCP echo, steps/s with and without pipelining (needs root)");
  auto clusterOptions = std::make_shared<ClusterBenchOptions>();
  clusterOptions->netbed = "scripts/netbed";
  cluster->add_option("--hosts", clusterOptions->hosts, "coordinator + workers + client")
      ->capture_default_str()
      ->check(CLI::Range(4u, 16u));
  cluster->add_option("--delays-us", clusterOptions->delaysUs, "added one-way link delays")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000000u));
  cluster->add_option("--samples", clusterOptions->samples, "round trips per row")
      ->capture_default_str()
      ->check(CLI::Range(10u, 100000u));
  cluster->add_option("--sessions", clusterOptions->sessions, "sessions of the steps/s rows")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  cluster
      ->add_option("--pipelined", clusterOptions->pipelined,
                   "steps in flight per session in the pipelined row")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  cluster
      ->add_option("--cuts", clusterOptions->cutsSeconds,
                   "seconds host 2's cable is pulled, one run each")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 600.0));
  auto noCuts = std::make_shared<bool>(false);
  cluster->add_flag("--no-cuts", *noCuts, "no cable pulled: the round-trip rows only")
      ->excludes("--cuts");
  cluster->add_option("--netbed", clusterOptions->netbed, "scripts/netbed")->capture_default_str();
  cluster->add_flag("--quick", clusterOptions->quick, "4 hosts, 0 and 2000 us, one 4 s cut");
  cluster->add_flag("--json", *json, "print the figures as JSON");
  cluster->callback([clusterOptions, json, noCuts] {
    if (*noCuts) clusterOptions->cutsSeconds.clear();
    printOrFail(runClusterBench(*clusterOptions), *json);
  });
}

void addSoakBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* soak = app.add_subcommand(
      "soak",
      "a bounded soak: random session churn and worker kills; every step counted and every "
      "ended session's state checked; memory, descriptors, compilers and files over time; "
      "fails if a step is lost, a state is wrong or anything is left behind");
  auto soakOptions = std::make_shared<SoakOptions>();
  soak->add_option("--duration", soakOptions->seconds, "seconds of churn")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  soak->add_option("--sessions", soakOptions->sessions, "sessions kept live")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  soak->add_option("--sample-every", soakOptions->sampleEvery, "seconds between samples")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  soak->add_option("--kill-every", soakOptions->killEvery,
                   "mean seconds between worker kills (0 = none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  soak->add_option("--workers", soakOptions->workers, "plain workers (all but the first killed)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  soak->add_option("--slots", soakOptions->slots, "slots per worker and nesting host")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  soak->add_option("--mix", soakOptions->mix, "session types and weights, TYPE:WEIGHT,...")
      ->capture_default_str();
  soak->add_option("--seed", soakOptions->seed, "random seed (0 = random)");
  soak->add_option("--logs", soakOptions->logDirectory,
                   "keep every host's warnings and errors in this directory, one file per "
                   "process (replacements included)");
  soak->add_flag("--json", *json, "print the figures as JSON");
  soak->callback([soakOptions, json] {
    SoakFigures figures;
    printOrFail(runSoakBench(*soakOptions, &figures), *json);
    if (!figures.passed()) throw CLI::RuntimeError(2);
  });
}

#ifdef KILN_WITH_LLVM_BENCH
void addDatasetsBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* corpus = app.add_subcommand(
      "datasets",
      "an operator's corpus at scale: index, worker start-up, listing, cold and cached starts, "
      "worker RSS while sessions touch thousands of modules");
  auto corpusOptions = std::make_shared<DatasetsBenchOptions>();
  corpus->add_option("--modules", corpusOptions->modules, "modules per corpus layout")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  corpus->add_option("--touched", corpusOptions->touched, "different modules sessions start on")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  corpus->add_option("--csmith-seeds", corpusOptions->csmithSeeds, "csmith programs among sources")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000u));
  corpus->add_option("--repetitions", corpusOptions->repetitions, "samples of each timing")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  corpus->add_option("--cached-starts", corpusOptions->cachedStarts, "starts on cached modules")
      ->capture_default_str()
      ->check(CLI::Range(1u, 200u));
  corpus->add_flag("--json", *json, "print the figures as JSON");
  corpus->callback([corpusOptions, json] { printOrFail(runDatasetsBench(*corpusOptions), *json); });
}

#endif
void addCoordinatorBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* coordinator = app.add_subcommand(
      "coordinator",
      "one coordinator and many simulated hosts: placement latency, CPU, RSS, status, loss, "
      "restart");
  auto coordinatorOptions = std::make_shared<CoordinatorBenchOptions>();
  auto quick = std::make_shared<bool>(false);
  auto heartbeatSeconds = std::make_shared<double>(1.0);
  auto& co = *coordinatorOptions;
  coordinator->add_option("--hosts", co.hostCounts, "host counts, each run in turn")
      ->capture_default_str()
      ->check(CLI::Range(2u, 20000u));
  coordinator->add_option("--sessions-per-host", co.sessionsPerHost, "sessions placed per host")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  coordinator->add_option("--max-sessions", co.maxSessions, "at most this many per host count")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000000u));
  coordinator->add_option("--placers", co.placers, "concurrent placement clients")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  coordinator->add_option("--placement-rate", co.placementRate, "placements/s offered in all")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  coordinator->add_option("--burst", co.burstPlacements, "placements made unpaced afterwards")
      ->capture_default_str()
      ->check(CLI::Range(0u, 10000000u));
  coordinator->add_option("--experiments", co.experiments, "experiments opened and closed")
      ->capture_default_str()
      ->check(CLI::Range(0u, 100u));
  coordinator->add_option("--nesting-share", co.nestingShare, "share of hosts that nest")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  coordinator->add_option("--heartbeat-seconds", *heartbeatSeconds, "heartbeat interval")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 60.0));
  coordinator->add_option("--idle-seconds", co.idleSeconds, "heartbeats-only measurement")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 600.0));
  coordinator->add_option("--lost-hosts", co.lostHosts, "hosts silenced to time their loss")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1000u));
  coordinator->add_flag("!--no-restart", co.restart, "skip the coordinator restart");
  coordinator->add_flag("--pinned", co.pinned,
                        "run everything (coordinator, hosts, placers, floor) on CPU 0");
  coordinator->add_flag("--quick", *quick,
                        "a few seconds: 20 and 60 hosts, 20 sessions each, 0.2 s heartbeats");
  coordinator->add_flag("--json", *json, "print the figures as JSON");
  coordinator->callback([coordinatorOptions, quick, heartbeatSeconds, json] {
    CoordinatorBenchOptions options = *coordinatorOptions;
    options.heartbeatInterval = std::chrono::milliseconds(long(*heartbeatSeconds * 1000));
    if (*quick) {
      options.hostCounts = {20, 60};
      options.sessionsPerHost = 20;
      options.placementRate = 2000;
      options.burstPlacements = 200;
      options.experiments = 1;
      options.experimentWorkers = 2;
      options.heartbeatInterval = std::chrono::milliseconds(200);
      options.idleSeconds = 1;
      options.lostHosts = 2;
      options.statusSamples = 3;
    }
    printOrFail(runCoordinatorBench(options), *json);
  });
}

#ifdef KILN_WITH_LLVM_BENCH
void addAffinityBench(CLI::App& app, const std::shared_ptr<bool>& json) {
  auto* affinity = app.add_subcommand(
      "affinity", "session starts with and without the coordinator's cache affinity");
  auto affinityOptions = std::make_shared<AffinityBenchOptions>();
  auto& ao = *affinityOptions;
  affinity->add_option("--workers", ao.workers, "worker processes of 1 slot")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  affinity->add_option("--benchmarks", ao.benchmarks, "benchmarks drawn from")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  affinity->add_option("--starts", ao.starts, "session starts per mode")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  affinity->add_option("--clients", ao.clients, "clients starting sessions at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  affinity->add_option("--slack", ao.slack, "the affinity mode's --cache-affinity-slack")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1000.0));
  affinity->add_option("--prefix", ao.prefix, "benchmark URI prefix; seeds 1..N are appended")
      ->capture_default_str();
  affinity->add_flag("--json", *json, "print the figures as JSON");
  affinity->callback(
      [affinityOptions, json] { printOrFail(runAffinityBench(*affinityOptions), *json); });
}

#endif
void addZmqEchoServer(CLI::App& app) {
  auto* echo = app.add_subcommand("zmq-echo", "the raw ZeroMQ baseline server (internal)");
  echo->group("");  // hidden from --help
  auto listen = std::make_shared<std::string>("tcp://127.0.0.1:0");
  echo->add_option("--listen", *listen, "endpoint");
  echo->callback([listen] { std::exit(runZmqEchoServer(*listen)); });
}

void addSocketEchoServer(CLI::App& app) {
  auto* streamEcho =
      app.add_subcommand("socket-echo", "a raw stream socket echo server (internal)");
  streamEcho->group("");  // hidden from --help
  auto streamListen = std::make_shared<std::string>("tcp:127.0.0.1:0");
  auto poll = std::make_shared<bool>(false);
  streamEcho->add_option("--listen", *streamListen, "unix:@NAME or tcp:127.0.0.1:PORT");
  streamEcho->add_flag("--poll", *poll, "spin on non-blocking reads instead of sleeping");
  auto spinUs = std::make_shared<unsigned>(0);
  streamEcho
      ->add_option("--spin-after-reply-us", *spinUs,
                   "poll this long after each reply before sleeping, as a worker does")
      ->check(CLI::Range(0u, 1'000'000u));
  streamEcho->callback([streamListen, poll, spinUs] {
    std::exit(runStreamEchoServer(*streamListen, *poll ? Waiting::kPolling : Waiting::kBlocking,
                                  std::chrono::microseconds(*spinUs)));
  });
}

void addNetbedSwitch(CLI::App& app) {
  auto* netbedSwitch = app.add_subcommand(
      "netbed-switch", "the switch of scripts/netbed's emulated links (internal)");
  netbedSwitch->group("");  // hidden from --help
  auto switchOptions = std::make_shared<LinkSwitchOptions>();
  auto shape = std::make_shared<std::string>("0 0 0");
  netbedSwitch->add_option("--taps", switchOptions->taps, "TAP devices to create, host 1 first")
      ->delimiter(',')
      ->required();
  netbedSwitch->add_option("--shape", *shape, "'delay_us jitter_us loss' of every link");
  netbedSwitch->add_option("--control", switchOptions->control, "a FIFO to read commands from");
  netbedSwitch->add_option("--seed", switchOptions->seed, "the random seed of jitter and loss");
  netbedSwitch->callback([switchOptions, shape] {
    auto parsed = parseLinkShape(*shape);
    if (!parsed.ok()) throw CLI::ValidationError("--shape", parsed.status().message());
    switchOptions->shape = *parsed;
    std::exit(runLinkSwitch(*switchOptions));
  });
}

}  // namespace

void addBenchCommands(CLI::App& app) {
  app.require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  app.add_flag("--json", *json, "print the figures as JSON");
  addRttBench(app, json);
  addNestingBench(app, json);
#ifdef KILN_WITH_MLGO_BENCH
  addMlgoBench(app, json);
#endif
#ifdef KILN_WITH_LLVM_BENCH
  addLlvmBench(app, json);
  addActionsBench(app, json);
  addRuntimeBench(app, json);
#endif
  addChaosBench(app, json);
  addClusterBench(app, json);
  addSoakBench(app, json);
#ifdef KILN_WITH_LLVM_BENCH
  addDatasetsBench(app, json);
#endif
  addCoordinatorBench(app, json);
#ifdef KILN_WITH_LLVM_BENCH
  addAffinityBench(app, json);
  addToolsBench(app, json);
#endif
  addZmqEchoServer(app);
  addSocketEchoServer(app);
  addNetbedSwitch(app);
}

}  // namespace kiln::bench
