// `kiln demo`: kiln's main job (tools/demo/demo_run.h: two pass-ordering
// experiments sharing a nesting host) on the embedded single-node default or
// on --coordinator; `kiln demo --noop` is a quick orchestration check with
// the noop session type that works on any cluster.
#include <fmt/format.h>

#include <random>

#include "tools/cli/commands.h"
#include "tools/demo/demo_run.h"
#include "tools/demo/learning_demo.h"
#include "tools/local_cluster/local_cluster.h"
#include "worker/worker_cli.h"

namespace kiln::cli {

namespace {

struct NoopDemoOptions {
  std::string coordinator;
  unsigned sessions = 8;
  unsigned steps = 200;
  double seconds = 0;  // > 0: step for this long instead of `steps` rounds
  unsigned workers = 2;
  std::optional<ClusterKeys> keys;
  std::optional<std::vector<std::filesystem::path>> allowFiles;
};

// On a cluster of nesting hosts only, sessions need an experiment.
Status useExperimentIfOnlyNestingHosts(client::Client& probe, client::ClientOptions& options) {
  KILN_ASSIGN_OR_RETURN(auto workers, probe.listCluster());
  unsigned plain = 0, nesting = 0;
  for (const auto& w : workers) (w.nesting ? nesting : plain) += 1;
  if (plain > 0 || nesting == 0) return okStatus();
  ExperimentSpec spec;
  spec.name = "demo-noop";
  spec.workers = nesting;
  spec.sessionTypes = {"noop"};
  KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, probe.openExperiment(spec));
  KILN_RETURN_IF_ERROR(
      probe.waitForExperiment(spec.name, nesting, std::chrono::seconds(30)).status());
  options.experiment = spec.name;
  options.experimentKey = opened.key;
  return okStatus();
}

void runNoopDemo(const NoopDemoOptions& o) {
  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  clientOptions.keys = o.keys;
  LocalClusterOptions local;
  local.isolateWorkers =
      true;  // a crash in compile work costs a restart (tools/local_cluster/worker_child.h)
  local.workers = o.workers;
  local.worker.allowFiles = o.allowFiles;
  auto embedded = connectOrStartLocal(clientOptions, local);
  if (!embedded.ok()) {
    fmt::print(stderr, "kiln demo: {}\n", embedded.status().toString());
    throw CLI::RuntimeError(1);
  }
  if (!o.coordinator.empty()) {
    client::ClientOptions experimentOptions = clientOptions;
    if (Status s = useExperimentIfOnlyNestingHosts(*embedded->client, experimentOptions); !s.ok()) {
      fmt::print(stderr, "kiln demo: {}\n", s.toString());
      throw CLI::RuntimeError(1);
    }
    if (!experimentOptions.experiment.empty()) {
      auto client = client::Client::connect(experimentOptions);
      if (!client.ok()) {
        fmt::print(stderr, "kiln demo: {}\n", client.status().toString());
        throw CLI::RuntimeError(1);
      }
      embedded->client = std::move(client).value();
    }
  }
  auto& client = *embedded->client;
  fmt::print("cluster: {}\n", embedded->cluster ? "embedded single-node (started for this job)"
                                                : clientOptions.coordinator);
  std::vector<std::unique_ptr<client::Session>> sessions;
  auto started = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < o.sessions; ++i) {
    client::SessionOptions options{"noop", fmt::format("benchmark://demo-v0/program-{}", i)};
    options.observations = {"Sum"};
    auto session = client.startSession(options);
    if (!session.ok()) {
      fmt::print(stderr, "start failed: {}\n", session.status().toString());
      throw CLI::RuntimeError(1);
    }
    sessions.push_back(std::move(session).value());
  }
  std::mt19937 random(42);
  std::uniform_int_distribution<std::int64_t> action(0, 7);
  std::uint32_t sum = *sessions[0]->observationIndex("Sum");
  // A noop session's Sum is the sum of the actions it was sent: what each
  // session must say at the end, wherever it was restored meanwhile.
  std::vector<std::int64_t> expectedSums(sessions.size(), 0);
  std::uint64_t steps = 0;
  const auto until = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(o.seconds));
  auto another = [&](unsigned round) {
    return o.seconds > 0 ? std::chrono::steady_clock::now() < until : round < o.steps;
  };
  for (unsigned round = 0; another(round); ++round) {
    std::vector<std::uint64_t> pending;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      const std::int64_t a = action(random);
      expectedSums[i] += a;
      pending.push_back(*sessions[i]->sendStep({a}, {sum}));
    }
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      auto result = sessions[i]->awaitStep(pending[i]);
      if (!result.ok()) {
        fmt::print(stderr, "step failed: {}\n", result.status().toString());
        throw CLI::RuntimeError(1);
      }
      ++steps;
    }
  }
  auto fork = sessions[0]->fork();
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print("{:<30} {:<28} {:>6} {:>8}\n", "SESSION", "WORKER", "STEPS", "SUM");
  std::size_t matching = 0;
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto& session = sessions[i];
    auto result = session->step(std::vector<Value>{}, std::vector<std::uint32_t>{sum});
    const std::int64_t said = result.ok() ? result->observations[0].as<std::int64_t>() : -1;
    matching += said == expectedSums[i] ? 1 : 0;
    fmt::print("{:<30} {:<28} {:>6} {:>8}\n", session->history().options.benchmark,
               session->endpoint(), session->history().steps.size() - 1, said);
  }
  if (fork.ok()) {
    auto result = (*fork)->step(std::vector<Value>{}, std::vector<std::uint32_t>{sum});
    fmt::print("forked session 0 on {}: sum {} (same as its parent)\n", (*fork)->endpoint(),
               result.ok() ? result->observations[0].as<std::int64_t>() : -1);
  }
  fmt::print("{} steps over {} sessions in {:.2f} s ({:.0f} steps/s)\n", steps, sessions.size(),
             seconds, steps / seconds);
  fmt::print("sessions restored after losing their worker: {}\n", client.restoredSessions());
  fmt::print("sums that match the actions sent: {} of {}\n", matching, sessions.size());
  if (matching != sessions.size()) {
    fmt::print(stderr, "kiln demo: {} sessions lost or miscounted steps\n",
               sessions.size() - matching);
    throw CLI::RuntimeError(1);
  }
  auto workers = client.listCluster();
  if (!workers.ok()) return;
  for (const auto& w : *workers) {
    fmt::print("worker {} {}: {} sessions, {} steps served\n", w.workerId, w.endpoint,
               w.liveSessions, w.stepsTotal);
  }
}

}  // namespace

void addDemoCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "demo",
      "run kiln's main job: two PPO pass-ordering learners sharing a nesting host, compared "
      "with dedicated halves and a shared pool (on an embedded single-node cluster unless "
      "--coordinator)");
  auto options = std::make_shared<demo::DemoOptions>();
  auto learning = std::make_shared<demo::LearningDemoOptions>();
  auto useSearch = std::make_shared<bool>(false);
  auto nestedOnly = std::make_shared<bool>(false);
  auto iterations = std::make_shared<unsigned>(0);
  auto noop = std::make_shared<NoopDemoOptions>();
  auto useNoop = std::make_shared<bool>(false);
  auto quick = std::make_shared<bool>(false);
  command->add_option("--coordinator", options->coordinator,
                      "use this cluster instead of starting one");
  auto keyFile = std::make_shared<std::string>();
  addKeyFileOption(*command, *keyFile);
  auto allowFiles = std::make_shared<std::vector<std::string>>();
  addAllowFilesOption(*command, *allowFiles)
      ->excludes(command->get_option("--coordinator"))
      ->description(
          "embedded cluster only: a directory below which its workers may read files that "
          "clients name (file:// benchmarks); repeatable; 'none' = no files; default: the "
          "current directory");
  command
      ->add_option("--iterations", *iterations,
                   "training iterations per learner (default: 12, --quick: 4)")
      ->check(CLI::Range(1u, 10000u));
  command->add_flag("--nested-only", *nestedOnly,
                    "run the learners on the nesting host alone, without the comparison");
  command->add_option("--json", learning->json, "also write the figures as JSON to this file");
  command
      ->add_option("--worker-cpus", learning->workerCpus,
                   "CPUs of the embedded worker hosts together (0 = half the cores; the learners "
                   "get the rest)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 4096.0));
  command
      ->add_option("--budget", learning->budget,
                   "how each embedded worker host's CPU budget is enforced: auto, cgroup-v2, "
                   "cgroup-v1, affinity or none (hosts and learners share every core)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "cgroup-v2", "cgroup-v1", "affinity", "none"}));
  command->add_flag("--search", *useSearch,
                    "instead: the search demo (a random and a greedy search over pass "
                    "orderings, with fixed lulls)");
  command->add_option("--rounds", options->rounds, "--search: collection rounds per experiment")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100u));
  command->add_option("--slots", options->slots, "slots of the embedded nesting host (0 = cores)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  command->add_option("--benchmark", options->benchmarks,
                      "benchmark URIs to learn or search on (repeatable; default: a "
                      "kiln-bench-v0 and csmith mix)");
  command->add_option("--report", options->report, "where to write the HTML report")
      ->capture_default_str();
  command->add_flag("--quick", *quick, "tiny budgets (well under 30 s on 2 cores)");
  command->add_flag("--noop", *useNoop,
                    "instead: a quick orchestration check with the noop session type");
  command->add_option("--sessions", noop->sessions, "--noop: concurrent sessions")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  command->add_option("--steps", noop->steps, "--noop: steps per session")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  command
      ->add_option("--seconds", noop->seconds,
                   "--noop: step for this many seconds instead of --steps rounds")
      ->check(CLI::Range(0.0, 86400.0));
  command->add_option("--workers", noop->workers, "--noop: workers of the embedded cluster")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  command->callback([options, learning, noop, useNoop, useSearch, nestedOnly, iterations, quick,
                     keyFile, allowFiles] {
    options->keys = loadKeyFileOrExit(*keyFile, "demo");
    noop->keys = options->keys;
    auto allowed = allowFilesFromFlags(*allowFiles);
    if (!allowed.ok()) {
      fmt::print(stderr, "kiln demo: {}\n", allowed.status().toString());
      throw CLI::RuntimeError(1);
    }
    options->allowFiles = std::move(allowed).value();
    noop->allowFiles = options->allowFiles;
    if (*useNoop) {
      noop->coordinator = options->coordinator;
      return runNoopDemo(*noop);
    }
    Status done = okStatus();
    if (*useSearch) {
      if (*quick) {
        options->budget = demo::SearchBudget{6, 12, 4, 4};
        options->rounds = std::min(options->rounds, 2u);
      }
      done = demo::runDemo(*options, stdout);
    } else {
      learning->coordinator = options->coordinator;
      learning->slots = options->slots;
      learning->report = options->report;
      learning->keys = options->keys;
      learning->allowFiles = options->allowFiles;
      learning->experiments = demo::defaultLearners(
          options->benchmarks.empty() ? demo::defaultBenchmarks() : options->benchmarks, *quick);
      for (auto& e : learning->experiments) {
        if (*iterations != 0) e.iterations = *iterations;
      }
      if (*nestedOnly) learning->layouts = {Layout::kNested};
      done = demo::runLearningDemo(*learning, stdout);
    }
    if (!done.ok()) {
      fmt::print(stderr, "kiln demo: {}\n", done.toString());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace kiln::cli
