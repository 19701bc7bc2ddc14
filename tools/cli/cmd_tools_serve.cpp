// `kiln tools serve`: the agent tools over HTTP (tools/tools_service/) for
// trainers that run elsewhere; a client of the cluster given with --cluster,
// or of an embedded single-node cluster started for it. It prints where it
// serves on its first line and stops on SIGINT/SIGTERM.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/metrics/listen_address.h"
#include "common/process/signals.h"
#include "tools/agent_tools/tool_executor.h"
#include "tools/cli/commands.h"
#include "tools/tools_service/tools_http_service.h"
#include "worker/worker_cli.h"

namespace kiln::cli {
namespace {

struct ServeFlags {
  std::string cluster;
  std::string keyFile;
  unsigned workers = 1;
  std::string listen = "127.0.0.1:8470";
  std::string keys;
  tools_service::ToolsServiceOptions service;
};

[[noreturn]] void fail(const Status& status) {
  fmt::print(stderr, "kiln tools serve: {}\n", status.toString());
  throw CLI::RuntimeError(1);
}

// The executor lets a caller as many calls at once as the most generous key
// does; each key's own quota is the service's to enforce (caller_gate.h).
agent_tools::ExecutorOptions executorOptions(const ServeFlags& flags,
                                             const tools_service::ApiKeys& keys) {
  agent_tools::ExecutorOptions options;
  options.client.coordinator = flags.cluster;
  options.client.keys = loadKeyFileOrExit(flags.keyFile, "tools serve");
  options.embeddedWorkers = flags.workers;
  std::size_t widest = flags.service.callerDefaults.maxConcurrent;
  for (const auto& key : keys.keys())
    widest = std::max<std::size_t>(widest, key.quota.maxConcurrent);
  options.limits.maxConcurrentCallsPerCaller = widest;
  return options;
}

// The executor as the service's backend once the cluster is up: the service
// is made and bound before it (a port in use fails at once, with no cluster
// started) and serves only after.
class LateBackend final : public tools_service::ToolBackend {
 public:
  void set(std::unique_ptr<tools_service::ToolBackend> backend) { backend_ = std::move(backend); }
  std::string schemaJson(bool results) const override { return backend_->schemaJson(results); }
  std::string call(const std::string& caller, std::string_view tool,
                   std::string_view argumentsJson) override {
    return backend_->call(caller, tool, argumentsJson);
  }

 private:
  std::unique_ptr<tools_service::ToolBackend> backend_;
};

void serve(ServeFlags& flags) {
  StopOnSignal signals;  // before any thread starts (the cluster's, the server's)
  auto address = metrics::parseListenAddress(flags.listen);
  if (!address.ok()) {
    // parseListenAddress words its errors for --metrics-listen.
    std::string message = address.status().message();
    if (message.starts_with("metrics address")) message.erase(0, std::string("metrics ").size());
    fail(invalidArgument(fmt::format("--listen: {}", message)));
  }
  flags.service.host = address->host;
  flags.service.port = address->port;
  auto keys = tools_service::ApiKeys::load(flags.keys);
  if (!keys.ok()) fail(keys.status());
  const std::size_t callers = keys->keys().size();
  const agent_tools::ExecutorOptions options = executorOptions(flags, *keys);
  // Declared before the service: it stops serving before they go.
  std::unique_ptr<agent_tools::ToolExecutor> executor;
  LateBackend backend;
  Logger logger = makeLogger("tools-serve");
  auto service =
      tools_service::ToolsHttpService::create(flags.service, std::move(*keys), backend, logger);
  if (!service.ok()) fail(service.status());
  if (auto bound = (*service)->bind(); !bound.ok()) fail(bound.status());
  auto created = agent_tools::ToolExecutor::create(options);
  if (!created.ok()) fail(created.status());
  executor = std::move(*created);
  backend.set(tools_service::executorBackend(*executor));
  auto port = (*service)->start();
  if (!port.ok()) fail(port.status());
  std::atomic<bool> stop{false};
  signals.onSignal([&stop] { stop.store(true); });
  fmt::print("serving {} for {} callers on {}; Ctrl-C stops it\n", (*service)->url(), callers,
             flags.cluster.empty() ? std::string("an embedded cluster") : flags.cluster);
  std::fflush(stdout);
  if (!metrics::isLoopbackHost(flags.service.host)) {
    logger->warn(
        "--listen {} serves beyond this machine over plain HTTP: API keys cross the "
        "network in the clear; put a TLS proxy in front",
        flags.listen);
  }
  while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*service)->stop();
}

}  // namespace

void addToolsServeCommand(CLI::App& app) {
  auto found = app.get_subcommands([](CLI::App* sub) { return sub->get_name() == "tools"; });
  CLI::App* tools =
      found.empty() ? app.add_subcommand("tools", "kiln's tools for LLM agents") : found.front();
  auto* command = tools->add_subcommand(
      "serve", "serve the agent tools over HTTP JSON, with an API key per caller");
  auto flags = std::make_shared<ServeFlags>();
  auto& f = *flags;
  command->add_option("--cluster,--coordinator", f.cluster,
                      "the cluster's coordinator, e.g. tcp://10.0.0.1:7700 (default: an embedded "
                      "single-node cluster)");
  addKeyFileOption(*command, f.keyFile);
  command->add_option("--workers", f.workers, "workers of the embedded cluster")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  command->add_option("--listen", f.listen, "HOST:PORT to serve on (port 0: any free one)")
      ->capture_default_str();
  command
      ->add_option("--keys", f.keys,
                   "the API keys: lines of KEY CALLER [concurrent=N] [rate=R] [batch=N], mode 0600")
      ->required();
  command
      ->add_option("--max-body-bytes", f.service.maxBodyBytes, "largest request body (413 over it)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  command
      ->add_option("--max-concurrent", f.service.callerDefaults.maxConcurrent,
                   "a caller's calls in flight at once, where its key names none")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  command
      ->add_option("--rate", f.service.callerDefaults.callsPerSecond,
                   "a caller's calls per second, where its key names none (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  command
      ->add_option("--max-batch", f.service.callerDefaults.maxBatch,
                   "calls in one batch, where the caller's key names no batch=")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  command
      ->add_option("--http-threads", f.service.httpThreads, "requests served at once, all callers")
      ->capture_default_str()
      ->check(CLI::Range(1u, 4096u));
  command->callback([flags] { serve(*flags); });
}

}  // namespace kiln::cli
