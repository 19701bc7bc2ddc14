// Command-line options and the serve loop shared by `kiln worker` and by
// runWorker<...>() for user-defined session types.
#pragma once

#include <CLI/CLI.hpp>

#include "worker/worker_server.h"

namespace kiln {

struct WorkerCommandLine {
  WorkerConfig config;
  // --worker-token-file (common/security/worker_token.h); empty = the default file, if any.
  std::string workerTokenFile;
  std::string logLevel = "info";
  std::string keyFile;                        // the cluster key (kiln keygen); empty = plaintext
  std::string authorizedKeys;                 // extra client public keys, one per line
  std::vector<std::string> allowFiles;        // --allow-files as given (parseAllowFiles)
  Duration drain = std::chrono::seconds(10);  // --drain-seconds
};

// --drain-seconds into `drain`: how long a stop on SIGTERM/SIGINT lets
// running requests finish (common/process/signals.h).
void addDrainOption(CLI::App& app, Duration& drain);
// How long after the first signal a serving process may take to end:
// its drain and kStopGrace.
std::chrono::milliseconds stopBound(Duration drain);
// A serving process's stop at once (StopOnSignal's `now`): removes
// `workingDirectory` (if any) on a best effort and _exits with
// kExitStoppedAtOnce.
[[noreturn]] void stopAtOnce(const std::filesystem::path& workingDirectory, const Logger& logger);

void addWorkerOptions(CLI::App& app, WorkerCommandLine& options);
// Adds --key-file (and, for servers, --authorized-keys) with one wording everywhere.
void addKeyFileOption(CLI::App& app, std::string& keyFile);
void addAuthorizedKeysOption(CLI::App& app, std::string& authorizedKeys);
// Adds --worker-token-file (common/security/worker_token.h), worded for a coordinator
// (`registers` = false: the side that checks) or for a worker or host.
void addWorkerTokenOption(CLI::App& app, std::string& file, bool registers);
// Adds --allow-files (repeatable) with one wording everywhere; the values
// go through parseAllowFiles (include/kiln/file_access.h) when the command runs.
CLI::Option* addAllowFilesOption(CLI::App& app, std::vector<std::string>& values);
// parseAllowFiles against the current directory.
Result<std::optional<std::vector<std::filesystem::path>>> allowFilesFromFlags(
    const std::vector<std::string>& values);
// --compile-memory-mb into `bytes` (worker, nest, local).
void addCompileMemoryOption(CLI::App& app, std::uint64_t& bytes);
// --allow-client-tuning into HostLimits::clientTuning (worker, nest, local,
// runWorker<...>() binaries).
void addClientTuningOption(CLI::App& app, bool& allowed);
// --enable-fault-injection (worker, nest, local and runWorker<...>() binaries).
void addFaultInjectionOption(CLI::App& app, OperatorSettings& settings);
// --mlgo-opt, --mlgo-llc and the mlgo time limits (kiln worker, nest, local).
void addMlgoOptions(CLI::App& app, OperatorSettings& settings);
// --sandbox-* limits, --sandbox-require-namespaces, --runtime-linker,
// --runtime-max-runs, --runtime-cpus and --runtime-cpu-locks: where and how
// benchmark binaries run (kiln worker, nest, local).
void addSandboxOptions(CLI::App& app, OperatorSettings& settings);
// --dataset NAME=DIR (include/kiln/kit/operator_settings.h), repeatable.
void addDatasetOption(CLI::App& app, OperatorSettings& settings);
// Checks --metrics-listen values (ADDR:PORT) before anything starts.
CLI::Validator metricsListenValidator();
// Starts a worker with `types`, serves until SIGINT/SIGTERM; returns the exit code.
int serveWorker(const WorkerCommandLine& options, SessionTypeRegistry& types);

}  // namespace kiln
