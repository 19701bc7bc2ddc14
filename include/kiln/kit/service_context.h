// The per-process context shared by every session of a worker (public): the
// working directory, the benchmark cache, the logger and the clock. Users
// derive from ServiceContext to keep their own long-lived state (e.g. parsed
// modules); init() and shutdown() run exactly once per process.
#pragma once

#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>
#include <string>

#include <kiln/clock.h>
#include <kiln/file_access.h>
#include <kiln/kit/benchmark_cache.h>
#include <kiln/kit/compilation_session.h>
#include <kiln/kit/operator_settings.h>
#include <kiln/logging.h>
#include <kiln/status.h>

namespace kiln {

// Owned by the worker (or nesting host) process; outlives every context.
struct ContextResources {
  std::filesystem::path workingDirectory;
  BenchmarkCache& benchmarkCache;
  Logger logger;
  const Clock& clock;
  std::uint64_t maxBenchmarkBytes = 64u << 20;
  // Address-space limit (RLIMIT_AS) of each compiler process a context
  // starts; 0 = none (HostLimits::compileMemoryBytes).
  std::uint64_t compileMemoryBytes = 0;
  // Where files a client names may be read (--allow-files); empty = nowhere.
  FileAccess files;
  // The operator's flags for the contexts (programs, ceilings, fault hooks).
  OperatorSettings settings;
  // Data a client's module may make the code generator write
  // (--max-module-data-bytes; compilers/llvm_engine/module_policy.h).
  std::uint64_t maxModuleDataBytes = std::uint64_t{256} << 20;
};

class ServiceContext {
 public:
  explicit ServiceContext(ContextResources& resources) : resources_(resources) {}
  virtual ~ServiceContext() = default;
  ServiceContext(const ServiceContext&) = delete;
  ServiceContext& operator=(const ServiceContext&) = delete;

  virtual Status init() { return okStatus(); }
  virtual Status shutdown() { return okStatus(); }

  // Turns a URI the cache does not hold into a benchmark. The default reads
  // file:// URIs with readClientFile() and accepts any other URI without a
  // program, for session types that need no input.
  virtual Result<Benchmark> resolveBenchmark(const std::string& uri);

  // A worker-level parameter (a SendSessionParameter with session id 0) that
  // the benchmark cache does not own, e.g. listing the datasets a context
  // serves. Called on the worker's network thread while sessions run on
  // others: keep it quick and thread-safe. Unknown keys: not-found.
  virtual Result<std::string> handleParameter(const std::string& key, const std::string& value) {
    return notFound("unknown worker parameter '" + key + "'");
  }
  // Whether `key` changes what every session of this process shares (a
  // cache bound, a time limit), other clients' sessions too: the host then
  // takes it from a client only where the operator allowed that
  // (HostLimits::clientTuning).
  virtual bool changesSharedState(const std::string& key) const { return false; }

  // Non-empty (what happened) once work of this context may have damaged the
  // process's memory, e.g. a crash caught inside it: the host then stops
  // taking work, answers what it runs, and exits to be restarted
  // (WorkerConfig::exitWhenDamaged). Called after every finished request on
  // the worker's network thread: keep it cheap and thread-safe.
  virtual std::optional<std::string> damage() const { return std::nullopt; }

  const std::filesystem::path& workingDirectory() const { return resources_.workingDirectory; }
  BenchmarkCache& benchmarkCache() { return resources_.benchmarkCache; }
  spdlog::logger& logger() { return *resources_.logger; }
  const Clock& clock() const { return resources_.clock; }
  std::uint64_t maxBenchmarkBytes() const { return resources_.maxBenchmarkBytes; }
  std::uint64_t compileMemoryBytes() const { return resources_.compileMemoryBytes; }
  std::uint64_t maxModuleDataBytes() const { return resources_.maxModuleDataBytes; }
  const FileAccess& fileAccess() const { return resources_.files; }

  // A file a client named (e.g. by a file:// URI): read only below the
  // operator's --allow-files directories, never through a symlink or '..'
  // that leaves them (common/security/file_reader.h), and at most maxBenchmarkBytes.
  // permission-denied outside them, not-found for a missing file inside.
  Result<std::shared_ptr<const std::string>> readClientFile(
      const std::filesystem::path& path) const;
  const OperatorSettings& settings() const { return resources_.settings; }

  // A new private directory under the working directory (e.g. for a child
  // compiler's pipes), `<prefix>-<pid>-XXXXXX`; the caller removes it when
  // done. The pid lets a nesting host remove what a child process that died
  // left there (removeSessionDirectoriesOf).
  Result<std::filesystem::path> makeSessionDirectory(const std::string& prefix);

 private:
  ContextResources& resources_;
};

// Removes the session directories that process `pid` made under
// `workingDirectory` (after it died); returns how many.
std::size_t removeSessionDirectoriesOf(const std::filesystem::path& workingDirectory, int pid);

}  // namespace kiln
