#include "worker/worker_cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <system_error>

#include <kiln/file_access.h>
#include <kiln/kit/run_worker.h>
#include "common/base/exit_codes.h"
#include "common/metrics/listen_address.h"
#include "common/process/signals.h"
#include "common/process/working_directory.h"
#include "common/security/worker_token.h"
#include "common/transport/listen_exposure.h"
#include "worker/config_check.h"
#include "worker/limit_options.h"

namespace kiln {

CLI::Validator metricsListenValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto parsed = metrics::parseListenAddress(text);
        return parsed.ok() ? std::string() : parsed.status().message();
      },
      "ADDR:PORT");
}

void addKeyFileOption(CLI::App& app, std::string& keyFile) {
  app.add_option("--key-file", keyFile,
                 "cluster key file made by `kiln keygen` (mode 0600): CURVE authentication and "
                 "encryption on every connection; every kiln process of the cluster needs it");
}

void addAuthorizedKeysOption(CLI::App& app, std::string& authorizedKeys) {
  app.add_option("--authorized-keys", authorizedKeys,
                 "with --key-file: a file of extra client public keys (Z85, one per line) "
                 "accepted besides the cluster key");
}

void addWorkerTokenOption(CLI::App& app, std::string& file, bool registers) {
  app.add_option(
      "--worker-token-file", file,
      registers
          ? "the operator's registration token (mode 0600) shown to the coordinator, which "
            "registers only workers and nesting hosts that hold its token; default: "
            "$XDG_CONFIG_HOME/kiln/worker-token or ~/.config/kiln/worker-token if it exists"
          : "register only workers and nesting hosts that present the token in this file (mode "
            "0600; written with a new token if missing); default without --key-file: "
            "$XDG_CONFIG_HOME/kiln/worker-token or ~/.config/kiln/worker-token, so that only "
            "users who can read it run workers; with --key-file and no flag the cluster key "
            "alone registers");
}

CLI::Option* addAllowFilesOption(CLI::App& app, std::vector<std::string>& values) {
  return app.add_option(
      "--allow-files", values,
      "a directory below which files that clients name (file:// benchmarks) may be read; "
      "repeatable; symlinks and '..' may not lead out of it; 'none' = no files. Default: the "
      "current directory when every endpoint taking requests is loopback or ipc://, else none");
}

Result<std::optional<std::vector<std::filesystem::path>>> allowFilesFromFlags(
    const std::vector<std::string>& values) {
  std::error_code error;
  std::filesystem::path current = std::filesystem::current_path(error);
  if (error && !values.empty()) {
    return invalidArgument("--allow-files: the current directory is unknown: " + error.message());
  }
  return parseAllowFiles(values, current);
}

void addCompileMemoryOption(CLI::App& app, std::uint64_t& bytes) {
  app.add_option_function<std::uint64_t>(
         "--compile-memory-mb", [&bytes](std::uint64_t mb) { bytes = mb << 20; },
         "address-space limit (RLIMIT_AS) of each compile process: compiler children of the "
         "mlgo types, and the children of `kiln nest --isolate`; 0 = none (default 4096); a job "
         "spec's memory_limit_mb may only lower it")
      ->check(CLI::Range(std::uint64_t{0}, kMaxCompileMemoryMb));
}

void addClientTuningOption(CLI::App& app, bool& allowed) {
  app.add_flag("--allow-client-tuning", allowed,
               "let clients lower the settings every session of the process shares (cache "
               "bounds, mlgo time limits), other clients' sessions included; safe where one "
               "experiment has the process (kiln nest, isolated). Off: permission denied");
}

void addFaultInjectionOption(CLI::App& app, OperatorSettings& settings) {
  app.add_flag("--enable-fault-injection", settings.faultInjection,
               "let clients use the noop type's test hooks that crash, hang or skew sessions "
               "(noop.crash_on_step, noop.hang_on_step, noop.skew_next_starts): for fault tests "
               "only; without it they answer permission denied");
}

void addMlgoOptions(CLI::App& app, OperatorSettings& settings) {
  app.add_option("--mlgo-opt", settings.mlgoOpt,
                 "the opt the mlgo-inline and mlgo-compile types run (a path, or a name looked up "
                 "in PATH)")
      ->capture_default_str();
  app.add_option("--mlgo-llc", settings.mlgoLlc,
                 "the llc the mlgo-regalloc type runs (a path, or a name looked up in PATH)")
      ->capture_default_str();
  app.add_option_function<std::int64_t>(
         "--mlgo-decision-timeout-ms",
         [&settings](std::int64_t ms) { settings.mlgoDecisionTimeout = milliseconds(ms); },
         "the longest an mlgo compiler may take to open its channel or between two decisions "
         "(default 30000); clients may lower it (mlgo.decision_timeout_ms), not raise it")
      ->check(CLI::Range(std::int64_t{1}, kMaxCompilerTimeoutMs));
  app.add_option_function<std::int64_t>(
         "--mlgo-compile-timeout-ms",
         [&settings](std::int64_t ms) { settings.mlgoCompileTimeout = milliseconds(ms); },
         "the longest a whole non-interactive mlgo compile may take (default 120000); clients "
         "may lower it (mlgo.compile_timeout_ms, a job's timeout_ms), not raise it")
      ->check(CLI::Range(std::int64_t{1}, kMaxCompilerTimeoutMs));
}

void addSandboxOptions(CLI::App& app, OperatorSettings& settings) {
  sandbox::SandboxLimits& limits = settings.sandbox;
  app.add_option_function<std::int64_t>(
         std::string(sandbox::kWallTimeFlag),
         [&limits](std::int64_t ms) { limits.wallTime = milliseconds(ms); },
         "the longest one run of a benchmark binary may take (default 10000); clients may "
         "lower it (sandbox.wall_ms)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{3'600'000}));
  app.add_option_function<std::uint64_t>(
         std::string(sandbox::kMemoryFlag),
         [&limits](std::uint64_t mb) { limits.memoryBytes = mb << 20; },
         "the address space of each process of a benchmark binary, MiB (default 1024); "
         "clients may lower it (sandbox.memory_mb)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  app.add_option_function<std::uint32_t>(
         std::string(sandbox::kProcessesFlag),
         [&limits](std::uint32_t count) { limits.processes = count; },
         "processes and threads a benchmark binary may have at once (default 32)")
      ->check(CLI::Range(1u, 4096u));
  app.add_option_function<std::uint64_t>(
         std::string(sandbox::kOutputFlag),
         [&limits](std::uint64_t kb) { limits.outputBytes = kb << 10; },
         "what is kept of a benchmark binary's stdout and of its stderr, KiB (default 64; the "
         "rest is counted)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  app.add_option_function<std::uint64_t>(
         std::string(sandbox::kScratchFlag),
         [&limits](std::uint64_t mb) { limits.scratchBytes = mb << 20; },
         "the size of a benchmark binary's scratch directory, MiB (default 64)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  app.add_flag("--sandbox-require-namespaces", settings.sandboxRequireNamespaces,
               "run no benchmark binary where the host gives the sandbox no namespaces "
               "(without them it shares the host's network and files)");
  app.add_option("--runtime-linker", settings.runtimeLinker,
                 "the driver that links a module into an executable (a path, or a name looked up "
                 "in PATH)")
      ->capture_default_str();
  app.add_option("--runtime-max-runs", settings.runtimeMaxRuns,
                 "the most runs one Runtime observation may ask for (llvm.runtime_runs)")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxRuntimeRuns));
  app.add_option("--runtime-cpus", settings.runtimeCpus,
                 "how many of the worker's cores time programs, a Runtime measurement each at a "
                 "time, the others waiting in line (0 = half of them, at least one)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 4096u));
  app.add_option("--runtime-cpu-locks", settings.runtimeCpuLocks,
                 "the directory of the host-wide per-CPU locks that make the worker processes of "
                 "a host take turns on a measuring CPU (default: one per user in the temporary "
                 "directory; 'off' for a worker with CPUs of its own)");
}

void addDatasetOption(CLI::App& app, OperatorSettings& settings) {
  app.add_option_function<std::vector<std::string>>(
      "--dataset",
      [&settings](const std::vector<std::string>& values) {
        std::error_code error;
        const std::filesystem::path current = std::filesystem::current_path(error);
        for (const std::string& value : values) {
          auto dataset = parseDatasetFlag(value, current);
          if (!dataset.ok()) throw CLI::ValidationError(dataset.status().message());
          settings.datasets.push_back(std::move(dataset).value());
        }
      },
      "NAME=DIR: serve the corpus in DIR as benchmark://NAME/<module> (an ml-compiler-opt "
      "corpus with corpus_description.json, or a directory of .bc/.ll files); repeatable. Its "
      "files are read below DIR only; DIR is no root for clients' file:// benchmarks");
  // The deploy files' form: one word of the environment (KILN_DATASETS in
  // deploy/systemd/kiln.env) holding every corpus; empty = none.
  app.add_option_function<std::string>(
      "--datasets",
      [&settings](const std::string& list) {
        std::error_code error;
        const std::filesystem::path current = std::filesystem::current_path(error);
        auto datasets = parseDatasetList(list, current);
        if (!datasets.ok()) throw CLI::ValidationError(datasets.status().message());
        for (OperatorDataset& dataset : *datasets) settings.datasets.push_back(std::move(dataset));
      },
      "\"NAME=DIR NAME=DIR ...\": --dataset for each whitespace-separated item (directories "
      "without spaces); empty = none");
}

void addDrainOption(CLI::App& app, Duration& drain) {
  app.add_option_function<double>(
         "--drain-seconds",
         [&drain](double s) { drain = std::chrono::milliseconds(long(s * 1000)); },
         "on SIGTERM or SIGINT, how long running requests get to be answered while new ones "
         "are refused, before the contexts shut down and the working directory goes; the "
         "process then has 5 s more to end, else (or on a second signal) it stops at once "
         "with exit code 130 (default 10)")
      ->check(CLI::Range(0.0, 3600.0));
}

std::chrono::milliseconds stopBound(Duration drain) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(drain + kStopGrace);
}

void stopAtOnce(const std::filesystem::path& workingDirectory, const Logger& logger) {
  logger->warn(
      "stopping at once (a second signal, or the drain outlasted --drain-seconds): "
      "running requests go unanswered");
  logger->flush();
  // Children die with this process (PR_SET_PDEATHSIG); their files go here.
  if (!workingDirectory.empty()) removeWorkingDirectoryNow(workingDirectory);
  std::fflush(nullptr);
  ::_exit(kExitStoppedAtOnce);
}

void addWorkerOptions(CLI::App& app, WorkerCommandLine& o) {
  WorkerConfig& c = o.config;
  addDrainOption(app, o.drain);
  app.add_option("--coordinator", c.coordinator,
                 "coordinator endpoint to register with (e.g. tcp://127.0.0.1:7700); "
                 "empty = standalone");
  app.add_option("--listen", c.listen, "endpoint to serve sessions on (port 0 = any free port)")
      ->capture_default_str();
  app.add_option("--advertise", c.advertise,
                 "endpoint clients should use to reach this worker (default: the bound one)");
  app.add_option("--local-listen", c.localListen,
                 "extra ipc:// endpoint for clients on this host (same boot and network "
                 "namespace); 'auto' = an abstract name when --listen is TCP; '' = none")
      ->capture_default_str();
  app.add_option("--slots", c.slots, "sessions stepped in parallel (threads)")
      ->capture_default_str()
      ->check(CLI::Range(1u, kMaxSlots));
  addHostLimitOptions(app, c);
  addCompileMemoryOption(app, c.limits.compileMemoryBytes);
  app.add_option_function<std::uint64_t>(
         "--inline-step-us",
         [&c](std::uint64_t us) { c.limits.inlineStepBudget = std::chrono::microseconds(us); },
         "a step whose session's steps took less than this runs on the loop thread itself, "
         "when no pool thread is busy (default 60; 0 = never)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{10'000'000}));
  app.add_option_function<std::string>(
         "--direct-tcp",
         [&c](const std::string& text) {
           auto parsed = parseDirectTcp(text);
           if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
           c.directTcp = *parsed;
         },
         "direct channels for clients on other hosts: a TCP listener on --listen's interface "
         "read by the worker's own loop, skipping ZeroMQ's I/O threads; never on a cluster with "
         "a key (the stream is plaintext). 'auto' = any free port (default), 'off', or a port")
      ->type_name("auto|off|PORT");
  app.add_option_function<std::uint64_t>(
         "--reply-spin-us", [&c](std::uint64_t us) { c.replySpin = std::chrono::microseconds(us); },
         "after replying to a client on this host, poll this long before sleeping while the "
         "client answers that soon: saves it a wake-up (default 50; 0 = sleep at once)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1'000'000}));
  app.add_option_function<double>(
         "--heartbeat-seconds",
         [&c](double s) { c.link.heartbeatInterval = std::chrono::milliseconds(long(s * 1000)); },
         "heartbeat interval with the coordinator (default 1)")
      ->check(CLI::Range(0.01, 60.0));
  addFaultInjectionOption(app, c.settings);
  addClientTuningOption(app, c.limits.clientTuning);
  app.add_option("--work-dir", c.workingDirectoryBase,
                 "where the worker creates its private working directory (default: temp dir)");
  addAllowFilesOption(app, o.allowFiles);
  app.add_option("--metrics-listen", c.metricsListen,
                 "serve Prometheus metrics over HTTP on ADDR:PORT (port 0 = any free port, "
                 "printed in the log); default: off")
      ->check(metricsListenValidator());
  addKeyFileOption(app, o.keyFile);
  addAuthorizedKeysOption(app, o.authorizedKeys);
  addWorkerTokenOption(app, o.workerTokenFile, true);
  app.add_option("--log-level", o.logLevel, "trace, debug, info, warn, error or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
}

int serveWorker(const WorkerCommandLine& options, SessionTypeRegistry& types) {
  // Before any thread starts (ZeroMQ's, the pool's, the contexts').
  StopOnSignal signals(stopBound(options.drain));
  LogOptions log;
  parseLogLevel(options.logLevel, log.level);
  const char* role = options.config.mode.nesting ? "nest" : "worker";
  Logger logger = makeLogger(role, log);
  zmq::context_t zmq(1);
  WorkerConfig config = options.config;
  auto allowFiles = allowFilesFromFlags(options.allowFiles);
  if (!allowFiles.ok()) {
    logger->error("cannot start: {}", allowFiles.status().toString());
    return 1;
  }
  config.allowFiles = std::move(allowFiles).value();
  config.exitWhenDamaged = true;  // this process is the worker: its supervisor restarts it
  std::unique_ptr<ZapAuthenticator> authenticator;  // after zmq: closed before it
  if (!options.keyFile.empty()) {
    auto keys = loadKeyFile(options.keyFile);
    std::vector<std::string> extra;
    if (keys.ok() && !options.authorizedKeys.empty()) {
      auto loaded = loadAuthorizedKeys(options.authorizedKeys);
      if (!loaded.ok()) keys = loaded.status();
      if (loaded.ok()) extra = std::move(loaded).value();
    }
    auto started = keys.ok() ? ZapAuthenticator::start(zmq, *keys, extra, logger)
                             : Result<std::unique_ptr<ZapAuthenticator>>(keys.status());
    if (!started.ok()) {
      logger->error("cannot start: {}", started.status().toString());
      return 1;
    }
    authenticator = std::move(started).value();
    config.security = ServerSecurity{*keys, authenticator.get()};
  } else if (!options.authorizedKeys.empty()) {
    logger->error("cannot start: --authorized-keys needs --key-file (the cluster key)");
    return 1;
  }
  if (!config.coordinator.empty()) {
    auto token = presentedWorkerToken(options.workerTokenFile);
    if (!token.ok()) {
      logger->error("cannot start: {}", token.status().toString());
      return 1;
    }
    config.registrationToken = token->token;
    config.registrationTokenFile = options.workerTokenFile.empty()
                                       ? defaultWorkerTokenFile()
                                       : std::filesystem::path(options.workerTokenFile);
    if (!token->token.empty()) {
      logger->info("registers with the worker token in {}", token->file.string());
    }
  }
  announceExposure(role, config.listen, config.security.keys.has_value(), logger);
  SteadyClock clock;
  auto server = WorkerServer::create(config, types, zmq, clock, logger);
  if (!server.ok()) {
    logger->error("cannot start: {}", server.status().toString());
    return 1;
  }
  const auto now = [directory = (*server)->workingDirectory(), logger] {
    stopAtOnce(directory, logger);
  };
  signals.onSignal([&server, &options] { (*server)->drain(options.drain); }, now);
  fmt::print("{} {}\n", role, (*server)->endpoint());
  if ((*server)->metricsPort() != 0) fmt::print("metrics port {}\n", (*server)->metricsPort());
  std::fflush(stdout);
  (*server)->run();
  signals.onSignal({}, now);  // the server goes before the signal thread
  if ((*server)->damage()) {
    // See WorkerServer::damage(): the last answers leave with the context,
    // then the process ends without destructors.
    server->release();  // never destroyed
    authenticator.reset();
    zmq.close();
    logger->flush();
    std::fflush(nullptr);
    ::_exit(kExitRestartAfterCaughtCrash);
  }
  logger->info("stopped");
  return 0;
}

int runWorkerMain(int argc, char** argv, const std::string& description,
                  SessionTypeRegistry& types) {
  CLI::App app{description};
  WorkerCommandLine options;
  addWorkerOptions(app, options);
  CLI11_PARSE(app, argc, argv);
  return serveWorker(options, types);
}

}  // namespace kiln
