// `kiln demo`: kiln's main job on the embedded single-node default. Starts a
// local cluster, runs a short end-to-end job and prints what it did.
#include <fmt/format.h>

#include <random>

#include "cli/commands.h"
#include "local/local_cluster.h"

namespace kiln::cli {

namespace {

struct DemoOptions {
  std::string coordinator;
  unsigned sessions = 8;
  unsigned steps = 200;
  unsigned workers = 2;
};

void runNoopDemo(const DemoOptions& o) {
  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  LocalClusterOptions local;
  local.workers = o.workers;
  auto embedded = connectOrStartLocal(clientOptions, local);
  if (!embedded.ok()) {
    fmt::print(stderr, "kiln demo: {}\n", embedded.status().toString());
    throw CLI::RuntimeError(1);
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
  std::uint64_t steps = 0;
  for (unsigned s = 0; s < o.steps; ++s) {
    std::vector<std::uint64_t> pending;
    for (auto& session : sessions) pending.push_back(*session->sendStep({action(random)}, {sum}));
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
  for (auto& session : sessions) {
    auto result = session->step(std::vector<Value>{}, std::vector<std::uint32_t>{sum});
    fmt::print("{:<30} {:<28} {:>6} {:>8}\n", session->history().options.benchmark,
               session->endpoint(), session->history().steps.size() - 1,
               result.ok() ? result->observations[0].as<std::int64_t>() : -1);
  }
  if (fork.ok()) {
    auto result = (*fork)->step(std::vector<Value>{}, std::vector<std::uint32_t>{sum});
    fmt::print("forked session 0 on {}: sum {} (same as its parent)\n", (*fork)->endpoint(),
               result.ok() ? result->observations[0].as<std::int64_t>() : -1);
  }
  fmt::print("{} steps over {} sessions in {:.2f} s ({:.0f} steps/s)\n", steps, sessions.size(),
             seconds, steps / seconds);
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
      "demo", "run kiln's main job (on an embedded single-node cluster unless --coordinator)");
  auto options = std::make_shared<DemoOptions>();
  command->add_option("--coordinator", options->coordinator,
                      "use this cluster instead of starting one");
  command->add_option("--sessions", options->sessions, "concurrent sessions")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000u));
  command->add_option("--steps", options->steps, "steps per session")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  command->add_option("--workers", options->workers, "workers of the embedded cluster")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  command->callback([options] { runNoopDemo(*options); });
}

}  // namespace kiln::cli
