// `kiln coordinator`, `kiln worker` and `kiln local`: the long-running servers.
#include <fmt/format.h>

#include "common/process/signals.h"
#include "common/process/working_directory.h"
#include "common/security/worker_token.h"
#include "common/transport/listen_exposure.h"
#include "coordinator/coordinator_server.h"
#include "nesting/in_process_backend.h"
#include "nesting/isolating_backend.h"
#include "tools/cli/commands.h"
#include "tools/local_cluster/builtin_types.h"
#include "tools/local_cluster/local_cluster.h"
#include "worker/config_check.h"
#include "worker/limit_options.h"
#include "worker/worker_cli.h"

namespace kiln::cli {

namespace {

void addSeconds(CLI::App* command, const std::string& name, Duration& target,
                const std::string& help) {
  command
      ->add_option_function<double>(
          name, [&target](double s) { target = std::chrono::milliseconds(long(s * 1000)); }, help)
      ->check(CLI::Range(0.01, 3600.0));
}

// The coordinator's cache affinity (CoordinatorConfig::cacheAffinitySlack).
void addCacheAffinityOption(CLI::App& command, double& slack) {
  command
      .add_option("--cache-affinity-slack", slack,
                  "place a session on a worker that ran its benchmark lately (a warm cache) "
                  "while it has a free slot, or, when every worker is busy, while it has at "
                  "most this many more sessions per slot than the least loaded; 0 = by load "
                  "alone")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1000.0));
}

// The coordinator's bounds on experiments (kiln coordinator, kiln local):
// each one costs a nesting host a child process and underlying workers.
void addExperimentLimitOptions(CLI::App& command, ExperimentLimits& limits) {
  addCountOption(command, "--max-experiment-weight", limits.maxWeight, 1, 1000,
                 "the largest fair-share weight a client may give its experiment (a weight "
                 "takes slots from the other experiments on the same hosts)");
  addCountOption(command, "--max-experiments-per-client", limits.maxPerClient, 1, 100'000,
                 "experiments one client may hold open at once");
  addCountOption(command, "--max-experiments", limits.maxExperiments, 1, 100'000,
                 "experiments all clients may hold open at once");
  addCountOption(command, "--max-experiment-workers", limits.maxWorkers, 1, 4096,
                 "underlying workers one experiment may ask for");
}

// --worker-token-file of a command that runs a coordinator (kiln coordinator,
// kiln local): once the flags are parsed, the token workers must present
// goes into `token` (common/security/worker_token.h); a bad file stops the command.
void addCoordinatorTokenOption(CLI::App& command, Secret& token,
                               std::shared_ptr<std::pair<std::string, std::string>> keyFiles) {
  auto file = std::make_shared<std::string>();
  addWorkerTokenOption(command, *file, false);
  command.parse_complete_callback([&token, file, keyFiles] {
    auto resolved = coordinatorWorkerToken(*file, !keyFiles->first.empty());
    if (!resolved.ok()) {
      throw CLI::ValidationError("--worker-token-file", resolved.status().message());
    }
    token = resolved->token;
    if (!resolved->file.empty()) {
      fmt::print(stderr, "workers and nesting hosts register with the token in {}\n",
                 resolved->file.string());
    }
  });
}

// The key files of a server command; a bad one stops the command with its reason.
struct ServerKeys {
  std::optional<ClusterKeys> keys;
  std::vector<std::string> authorized;
};

ServerKeys loadServerKeys(const std::string& keyFile, const std::string& authorizedKeys,
                          Logger& logger) {
  ServerKeys loaded;
  Status status = okStatus();
  if (keyFile.empty() && !authorizedKeys.empty()) {
    status = invalidArgument("--authorized-keys needs --key-file (the cluster key)");
  } else if (!keyFile.empty()) {
    auto keys = loadKeyFile(keyFile);
    status = keys.status();
    if (keys.ok()) loaded.keys = std::move(keys).value();
  }
  if (status.ok() && !authorizedKeys.empty()) {
    auto authorized = loadAuthorizedKeys(authorizedKeys);
    status = authorized.status();
    if (authorized.ok()) loaded.authorized = std::move(authorized).value();
  }
  if (!status.ok()) {
    logger->error("cannot start: {}", status.toString());
    throw CLI::RuntimeError(1);
  }
  return loaded;
}

}  // namespace

void addCoordinatorCommand(CLI::App& app) {
  auto* command = app.add_subcommand("coordinator", "run the coordinator (placement, registry)");
  auto config = std::make_shared<CoordinatorConfig>();
  auto logLevel = std::make_shared<std::string>("info");
  auto keyFiles = std::make_shared<std::pair<std::string, std::string>>();
  command->add_option("--listen", config->listen, "endpoint to bind")->capture_default_str();
  addKeyFileOption(*command, keyFiles->first);
  addAuthorizedKeysOption(*command, keyFiles->second);
  addCoordinatorTokenOption(*command, config->workerToken, keyFiles);
  addSeconds(command, "--heartbeat-seconds", config->heartbeatInterval,
             "heartbeat interval (default 1)");
  command
      ->add_option("--liveness", config->liveness,
                   "silent intervals before a worker is declared lost")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  addCacheAffinityOption(*command, config->cacheAffinitySlack);
  addExperimentLimitOptions(*command, config->experiments);
  command
      ->add_option("--metrics-listen", config->metricsListen,
                   "serve Prometheus metrics and the live dashboard over HTTP on ADDR:PORT "
                   "(port 0 = any free port, printed); default: off")
      ->check(metricsListenValidator());
  command->add_option("--log-level", *logLevel, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  auto drain = std::make_shared<Duration>(std::chrono::seconds(10));
  addDrainOption(*command, *drain);
  command->callback([config, logLevel, keyFiles, drain] {
    // Before any thread starts (ZeroMQ's, the authenticator's).
    StopOnSignal signals(stopBound(*drain));
    LogOptions log;
    parseLogLevel(*logLevel, log.level);
    Logger logger = makeLogger("coordinator", log);
    ServerKeys keys = loadServerKeys(keyFiles->first, keyFiles->second, logger);
    zmq::context_t zmq(1);
    std::unique_ptr<ZapAuthenticator> authenticator;  // after zmq: closed before it
    if (keys.keys) {
      auto started = ZapAuthenticator::start(zmq, *keys.keys, keys.authorized, logger);
      if (!started.ok()) {
        logger->error("cannot start: {}", started.status().toString());
        throw CLI::RuntimeError(1);
      }
      authenticator = std::move(started).value();
      config->security = ServerSecurity{keys.keys, authenticator.get()};
    }
    announceExposure("coordinator", config->listen, keys.keys.has_value(), logger);
    SteadyClock clock;
    auto server = CoordinatorServer::create(*config, zmq, clock, logger);
    if (!server.ok()) {
      logger->error("cannot start: {}", server.status().toString());
      throw CLI::RuntimeError(1);
    }
    // The coordinator holds no request long: its drain is its stop.
    const auto now = [logger] { stopAtOnce({}, logger); };
    signals.onSignal([&server] { (*server)->stop(); }, now);
    fmt::print("coordinator {}\n", (*server)->endpoint());
    if ((*server)->metricsPort() != 0) {
      fmt::print("dashboard http://{}:{}/\n",
                 config->metricsListen.substr(0, config->metricsListen.rfind(':')),
                 (*server)->metricsPort());
    }
    std::fflush(stdout);
    (*server)->run();
    signals.onSignal({}, now);  // the server goes before the signal thread
    logger->info("stopped");
  });
}

namespace {

CLI::App* addHostCommand(
    CLI::App& app, const std::string& name, const std::string& description, ServingMode mode,
    std::shared_ptr<WorkerCommandLine> options = std::make_shared<WorkerCommandLine>()) {
  auto* command = app.add_subcommand(name, description);
  options->config.mode = std::move(mode);
  addWorkerOptions(*command, *options);
  WorkerConfig& config = options->config;
  addMlgoOptions(*command, config.settings);
  addSandboxOptions(*command, config.settings);
  addDatasetOption(*command, config.settings);
  command
      ->add_option_function<double>(
          "--stuck-seconds",
          [&config](double s) {
            config.stuckTaskAfter = std::chrono::milliseconds(long(s * 1000));
          },
          "replace a compile thread busy this long (a step that ignores cancellation), at "
          "most --slots of them still running at once; default: the longest deadline plus 5 s")
      ->check(CLI::Range(0.05, 86400.0));
  command->callback([options] {
    SessionTypeRegistry types;
    registerBuiltinSessionTypes(types);
    int code = serveWorker(*options, types);
    if (code != 0) throw CLI::RuntimeError(code);
  });
  return command;
}

}  // namespace

// `kiln worker` and `kiln nest` take the same options; a nesting host serves
// no sessions itself until the coordinator (or a client of an experiment)
// creates underlying workers on it.
void addWorkerCommand(CLI::App& app) {
  addHostCommand(app, "worker", "run a worker hosting kiln's session types", plainWorkerMode());
  auto nestOptions = std::make_shared<WorkerCommandLine>();
  // Isolated by default: a compile step that crashes (or a process that
  // stops after catching a crash) must take down only its own experiment.
  auto* nest = addHostCommand(app, "nest",
                              "run a nesting host: underlying workers of several experiments "
                              "sharing this host's slots and cache, each experiment in its own "
                              "child process",
                              nesting::isolatingHostMode(), nestOptions);
  // Parsed before the callback runs, which then serves in the chosen mode.
  nest->add_flag_callback(
      "--isolate", [nestOptions] { nestOptions->config.mode = nesting::isolatingHostMode(); },
      "run each experiment's underlying workers in a child process (forked after the contexts "
      "are initialised), so that a crashing or hanging compile step takes down only its own "
      "experiment; the slots stay one budget shared by experiment weight (the default; "
      "docs/faults.md)");
  nest->add_flag_callback(
      "--shared-process", [nestOptions] { nestOptions->config.mode = nesting::nestingHostMode(); },
      "run every experiment's underlying workers in this one process: no fork per experiment, "
      "but a compile step that crashes takes down every experiment on the host (their sessions "
      "are restored by replay elsewhere)");
  nest->get_option("--isolate")->excludes(nest->get_option("--shared-process"));
}

void addLocalCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "local",
      "run a whole single-node cluster: coordinator and nesting host in this process, each "
      "plain worker in a child process restarted after a crash in compile work");
  auto options = std::make_shared<LocalClusterOptions>();
  options->coordinator.listen = "tcp://127.0.0.1:7700";
  options->log.level = spdlog::level::info;
  options->nestingHosts = 1;       // so that experiments (and `kiln demo`) run on it too
  options->isolateWorkers = true;  // a crash in compile work costs a restart
  command->add_option("--listen", options->coordinator.listen, "coordinator endpoint")
      ->capture_default_str();
  command->add_option("--workers", options->workers, "number of plain workers")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  command->add_option("--nesting-hosts", options->nestingHosts, "number of nesting hosts")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  addCacheAffinityOption(*command, options->coordinator.cacheAffinitySlack);
  addExperimentLimitOptions(*command, options->coordinator.experiments);
  command
      ->add_option("--metrics-listen", options->coordinator.metricsListen,
                   "serve the coordinator's metrics and dashboard on ADDR:PORT; default: off")
      ->check(metricsListenValidator());
  command->add_option("--slots", options->worker.slots, "slots per worker")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxSlots));
  addHostLimitOptions(*command, options->worker);
  addCompileMemoryOption(*command, options->worker.limits.compileMemoryBytes);
  addMlgoOptions(*command, options->worker.settings);
  addSandboxOptions(*command, options->worker.settings);
  addDatasetOption(*command, options->worker.settings);
  addFaultInjectionOption(*command, options->worker.settings);
  addClientTuningOption(*command, options->worker.limits.clientTuning);
  auto keyFiles = std::make_shared<std::pair<std::string, std::string>>();
  addKeyFileOption(*command, keyFiles->first);
  addAuthorizedKeysOption(*command, keyFiles->second);
  addCoordinatorTokenOption(*command, options->coordinator.workerToken, keyFiles);
  auto allowFiles = std::make_shared<std::vector<std::string>>();
  addAllowFilesOption(*command, *allowFiles);
  addDrainOption(*command, options->drain);
  command->callback([options, keyFiles, allowFiles] {
    // Before any thread starts (ZeroMQ's, the workers', their children's).
    StopOnSignal signals(stopBound(options->drain));
    Logger logger = makeLogger("local", options->log);
    auto allowed = allowFilesFromFlags(*allowFiles);
    if (!allowed.ok()) {
      logger->error("cannot start: {}", allowed.status().toString());
      throw CLI::RuntimeError(1);
    }
    options->worker.allowFiles = std::move(allowed).value();
    ServerKeys keys = loadServerKeys(keyFiles->first, keyFiles->second, logger);
    options->keys = keys.keys;
    options->authorizedKeys = keys.authorized;
    announceExposure("local cluster", options->coordinator.listen, keys.keys.has_value(), logger);
    auto cluster = LocalCluster::start(*options);
    if (!cluster.ok()) {
      logger->error("cannot start: {}", cluster.status().toString());
      throw CLI::RuntimeError(1);
    }
    std::atomic<bool> stop{false};
    // Isolated workers remove their own directories, even on this
    // process's death (they get SIGTERM then); these are the others'.
    const auto now = [directories = (*cluster)->workingDirectories(), logger] {
      for (const auto& directory : directories) removeWorkingDirectoryNow(directory);
      stopAtOnce({}, logger);
    };
    signals.onSignal([&stop] { stop.store(true); }, now);
    fmt::print("local cluster: coordinator {} with {} workers ({}); Ctrl-C stops it\n",
               (*cluster)->coordinatorEndpoint(), options->workers,
               fmt::join((*cluster)->workerEndpoints(), ", "));
    std::fflush(stdout);
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    logger->info("stopping: draining the workers for up to {} ms (--drain-seconds)",
                 toMillis(options->drain));
    (*cluster)->drainAndStop(options->drain);
    cluster->reset();
    signals.onSignal({}, now);
    logger->info("stopped");
  });
}

}  // namespace kiln::cli
