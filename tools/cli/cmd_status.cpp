// `kiln status`: readable tables of the workers and nesting hosts (slots,
// sessions, load, utilization over the last minute), the experiments, and
// the underlying workers each host runs for them; or the same as JSON.
#include <fmt/format.h>

#include <numeric>

#include <kiln/client/client.h>
#include "common/base/json_text.h"
#include "tools/cli/commands.h"
#include "worker/worker_cli.h"

namespace kiln::cli {
namespace {

double average(const std::vector<float>& samples) {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
}

std::string experimentOf(const client::ClusterStatus& status, std::uint64_t workerId) {
  for (const auto& experiment : status.experiments) {
    for (const auto& worker : experiment.workers) {
      if (worker.workerId == workerId) return experiment.spec.name;
    }
  }
  return "?";
}

void printJson(const client::ClusterStatus& status) {
  fmt::print("{{\"workers\": [");
  for (std::size_t i = 0; i < status.workers.size(); ++i) {
    const auto& w = status.workers[i];
    fmt::print(
        "{}{{\"id\": {}, \"kind\": \"{}\", \"endpoint\": \"{}\", \"host\": \"{}\", \"slots\": {}, "
        "\"busy\": {}, \"sessions\": {}, \"max_sessions\": {}, \"steps\": {}, \"types\": [",
        i ? ", " : "", w.workerId, w.nesting ? "nest" : "worker", jsonEscape(w.endpoint),
        jsonEscape(w.hostname), w.slots, w.busySlots, w.liveSessions, w.maxSessions, w.stepsTotal);
    for (std::size_t t = 0; t < w.sessionTypes.size(); ++t) {
      fmt::print("{}\"{}\"", t ? ", " : "", jsonEscape(w.sessionTypes[t]));
    }
    fmt::print("], \"ms_since_heard\": {}, \"utilization_1m\": {:.4f}, \"underlying\": [",
               w.msSinceHeard, average(w.utilization));
    for (std::size_t u = 0; u < w.underlying.size(); ++u) {
      const auto& under = w.underlying[u];
      fmt::print(
          "{}{{\"id\": \"{:x}\", \"experiment\": \"{}\", \"sessions\": {}, \"busy\": {}, "
          "\"steps\": {}}}",
          u ? ", " : "", under.spec.workerId, jsonEscape(under.spec.experiment),
          under.load.liveSessions, under.load.busySlots, under.load.stepsTotal);
    }
    fmt::print("]}}");
  }
  fmt::print("], \"experiments\": [");
  for (std::size_t i = 0; i < status.experiments.size(); ++i) {
    const auto& e = status.experiments[i];
    std::uint32_t sessions = 0;
    for (const auto& w : e.workers) sessions += w.load.liveSessions;
    fmt::print(
        "{}{{\"name\": \"{}\", \"workers\": {}, \"ready\": {}, \"weight\": {}, "
        "\"sessions\": {}, \"utilization_1m\": {:.4f}, \"ms_since_heard\": {}}}",
        i ? ", " : "", jsonEscape(e.spec.name), e.spec.workers, e.readyWorkers(), e.spec.weight,
        sessions, average(e.utilization), e.msSinceHeard);
  }
  fmt::print("]}}\n");
}

void printTables(const client::ClusterStatus& status) {
  fmt::print("{:>4}  {:<6} {:<24} {:<12} {:>5} {:>5} {:>9} {:>6} {:>8} {:>10}  {}\n", "ID", "KIND",
             "ENDPOINT", "HOST", "SLOTS", "BUSY", "SESSIONS", "LOAD", "UTIL(1m)", "STEPS", "TYPES");
  std::uint32_t slots = 0, sessions = 0;
  for (const auto& w : status.workers) {
    double load = static_cast<double>(w.liveSessions) / std::max(1u, w.slots);
    fmt::print("{:>4}  {:<6} {:<24} {:<12} {:>5} {:>5} {:>9} {:>6.1f} {:>7.0f}% {:>10}  {}\n",
               w.workerId, w.nesting ? "nest" : "worker", w.endpoint, w.hostname.substr(0, 12),
               w.slots, w.busySlots, w.liveSessions, load, 100 * average(w.utilization),
               w.stepsTotal, fmt::join(w.sessionTypes, ","));
    slots += w.slots;
    sessions += w.liveSessions;
  }
  fmt::print("{} workers, {} slots, {} live sessions\n", status.workers.size(), slots, sessions);
  if (status.experiments.empty()) return;
  fmt::print("\n{:<20} {:>8} {:>7} {:>9} {:>8}  {}\n", "EXPERIMENT", "WORKERS", "WEIGHT",
             "SESSIONS", "UTIL(1m)", "HOSTS");
  for (const auto& e : status.experiments) {
    std::uint32_t live = 0;
    std::vector<std::uint64_t> hosts;
    for (const auto& w : e.workers) {
      live += w.load.liveSessions;
      if (std::find(hosts.begin(), hosts.end(), w.hostId) == hosts.end()) hosts.push_back(w.hostId);
    }
    fmt::print("{:<20} {:>4}/{:<3} {:>7} {:>9} {:>7.0f}%  {}\n", e.spec.name, e.readyWorkers(),
               e.spec.workers, e.spec.weight, live, 100 * average(e.utilization),
               fmt::join(hosts, ","));
  }
  fmt::print("\n{:>4}  {:<16} {:<20} {:>9} {:>5} {:>10}\n", "HOST", "UNDERLYING", "EXPERIMENT",
             "SESSIONS", "BUSY", "STEPS");
  for (const auto& w : status.workers) {
    for (const auto& under : w.underlying) {
      fmt::print("{:>4}  {:<16x} {:<20} {:>9} {:>5} {:>10}\n", w.workerId, under.spec.workerId,
                 under.spec.experiment.empty() ? experimentOf(status, under.spec.workerId)
                                               : under.spec.experiment,
                 under.load.liveSessions, under.load.busySlots, under.load.stepsTotal);
    }
  }
}

}  // namespace

void addStatusCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "status", "show the cluster's workers, nesting hosts, experiments and their load");
  auto coordinator = std::make_shared<std::string>("tcp://127.0.0.1:7700");
  auto json = std::make_shared<bool>(false);
  command->add_option("--coordinator", *coordinator, "coordinator endpoint")->capture_default_str();
  command->add_flag("--json", *json, "print JSON instead of tables");
  auto keyFile = std::make_shared<std::string>();
  addKeyFileOption(*command, *keyFile);
  command->callback([coordinator, json, keyFile] {
    client::ClientOptions options;
    options.coordinator = *coordinator;
    options.keys = loadKeyFileOrExit(*keyFile, "status");
    options.requestTimeout = std::chrono::seconds(5);
    auto client = client::Client::connect(options);
    if (!client.ok()) {
      fmt::print(stderr, "kiln status: {}\n", client.status().toString());
      throw CLI::RuntimeError(1);
    }
    auto status = (*client)->clusterStatus();
    if (!status.ok()) {
      bool refused = status.status().code() == ErrorCode::kPermissionDenied;
      fmt::print(stderr, "kiln status: {}{}\n", status.status().toString(),
                 refused ? "" : fmt::format(" (is a coordinator running at {}?)", *coordinator));
      throw CLI::RuntimeError(1);
    }
    if (*json) {
      printJson(*status);
    } else {
      printTables(*status);
    }
  });
}

}  // namespace kiln::cli
