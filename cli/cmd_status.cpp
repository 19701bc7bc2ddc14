// `kiln status`: a readable table of the workers, their slots, sessions and load.
#include <fmt/format.h>

#include "cli/commands.h"
#include "client/client.h"

namespace kiln::cli {

void addStatusCommand(CLI::App& app) {
  auto* command = app.add_subcommand("status", "show the cluster's workers and their load");
  auto coordinator = std::make_shared<std::string>("tcp://127.0.0.1:7700");
  auto json = std::make_shared<bool>(false);
  command->add_option("--coordinator", *coordinator, "coordinator endpoint")->capture_default_str();
  command->add_flag("--json", *json, "print JSON instead of a table");
  command->callback([coordinator, json] {
    client::ClientOptions options;
    options.coordinator = *coordinator;
    options.requestTimeout = std::chrono::seconds(5);
    auto client = client::Client::connect(options);
    if (!client.ok()) {
      fmt::print(stderr, "kiln status: {}\n", client.status().toString());
      throw CLI::RuntimeError(1);
    }
    auto workers = (*client)->listCluster();
    if (!workers.ok()) {
      fmt::print(stderr, "kiln status: {} (is a coordinator running at {}?)\n",
                 workers.status().toString(), *coordinator);
      throw CLI::RuntimeError(1);
    }
    if (*json) {
      fmt::print("{{\"workers\": [");
      for (std::size_t i = 0; i < workers->size(); ++i) {
        const auto& w = (*workers)[i];
        fmt::print(
            "{}{{\"id\": {}, \"endpoint\": \"{}\", \"host\": \"{}\", \"slots\": {}, "
            "\"busy\": {}, \"sessions\": {}, \"max_sessions\": {}, \"steps\": {}, "
            "\"types\": [\"{}\"], \"ms_since_heard\": {}}}",
            i ? ", " : "", w.workerId, w.endpoint, w.hostname, w.slots, w.busySlots, w.liveSessions,
            w.maxSessions, w.stepsTotal, fmt::join(w.sessionTypes, "\", \""), w.msSinceHeard);
      }
      fmt::print("]}}\n");
      return;
    }
    fmt::print("{:>4}  {:<24} {:<12} {:>5} {:>5} {:>9} {:>9} {:>6} {:>10}  {}\n", "ID", "ENDPOINT",
               "HOST", "SLOTS", "BUSY", "SESSIONS", "MAX", "LOAD", "STEPS", "TYPES");
    std::uint32_t slots = 0, sessions = 0;
    for (const auto& w : *workers) {
      double load = static_cast<double>(w.liveSessions) / std::max(1u, w.slots);
      fmt::print("{:>4}  {:<24} {:<12} {:>5} {:>5} {:>9} {:>9} {:>6.1f} {:>10}  {}\n", w.workerId,
                 w.endpoint, w.hostname.substr(0, 12), w.slots, w.busySlots, w.liveSessions,
                 w.maxSessions, load, w.stepsTotal, fmt::join(w.sessionTypes, ","));
      slots += w.slots;
      sessions += w.liveSessions;
    }
    fmt::print("{} workers, {} slots, {} live sessions\n", workers->size(), slots, sessions);
  });
}

}  // namespace kiln::cli
