// The per-process context of kiln's MLGO session types (mlgo-inline,
// mlgo-regalloc, mlgo-compile): compiler programs and time limits (the
// operator's flags; clients may lower the time limits with worker
// parameters "mlgo.*"), benchmark resolution through the datasets registry,
// and the default-policy native size cached per benchmark.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <kiln/kit/service_context.h>
#include "compilers/llvm_engine/crash_guard.h"
#include "compilers/mlgo_session/job_passes.h"
#include "compilers/mlgo_session/module_flags.h"
#include "programs/datasets/registry.h"
#include "programs/datasets/shared_registry.h"

namespace kiln::mlgo_session {

struct MlgoConfig {
  std::string opt = "opt-19";  // a bare name is looked up in PATH
  std::string llc = "llc-19";
  // The longest a compiler may take to open the channel, or between two
  // decisions, before it counts as hung (killed; the session ends).
  std::chrono::milliseconds decisionTimeout{30'000};
  // A whole non-interactive compile (default policy, pipeline steps, default job timeout).
  std::chrono::milliseconds compileTimeout{120'000};
  std::optional<std::uint64_t> memoryLimitBytes = std::uint64_t{4} << 30;
};

// The configuration the operator's settings and --compile-memory-mb give.
MlgoConfig operatorConfig(const OperatorSettings& settings, std::uint64_t compileMemoryBytes);

// Applies one "mlgo.*" parameter from a client to `config` and returns the
// reply. mlgo.decision_timeout_ms and mlgo.compile_timeout_ms (whole
// milliseconds) may only lower the operator's `ceiling`; mlgo.opt and
// mlgo.llc name programs, which only the operator chooses (--mlgo-opt,
// --mlgo-llc). not-found for other keys, invalid-argument for bad values,
// permission-denied for the operator's; the config is unchanged on error.
Result<std::string> applyConfigParameter(MlgoConfig& config, const MlgoConfig& ceiling,
                                         const std::string& key, const std::string& value);

class MlgoContext : public ServiceContext {
 public:
  // `datasets` is the process's registry, shared with its other contexts
  // (programs/datasets/shared_registry.h); none = a registry of this context's own.
  explicit MlgoContext(ContextResources& resources,
                       std::shared_ptr<datasets::SharedDatasetRegistry> datasets = nullptr);

  Status init() override;
  // benchmark:// and generator:// URIs through the datasets registry; others as ServiceContext.
  Result<Benchmark> resolveBenchmark(const std::string& uri) override;
  Result<std::string> handleParameter(const std::string& key, const std::string& value) override;
  // The two time limits: every mlgo session of the process runs under them.
  bool changesSharedState(const std::string& key) const override {
    return key == "mlgo.decision_timeout_ms" || key == "mlgo.compile_timeout_ms";
  }
  // A crash caught inside LLVM in this process (llvm_engine::firstCaughtCrash).
  std::optional<std::string> damage() const override { return llvm_engine::firstCaughtCrash(); }

  // A copy: sessions keep the configuration they started with.
  MlgoConfig config() const;
  // In process only (the operator, e.g. a test harness): replaces the
  // configuration and the ceilings of the clients' parameters alike.
  void setConfig(MlgoConfig config);

  // ok when LLVM 19 accepts the benchmark's module (parse and verifier, in
  // this process), checked before a session runs opt or llc on it so that a
  // bad module is a clear invalid-argument naming it, not a compiler's crash
  // report. A module refused is listed in its dataset's problems. Verdicts
  // are remembered per (URI, bytes) for the modules seen last.
  Status checkModule(const Benchmark& benchmark);

  // The module's own flags (a corpus module's .cmd) mapped for opt and llc
  // (module_flags.h); none for other benchmarks.
  Result<ModuleToolFlags> moduleFlags(const Benchmark& benchmark);

  // The passes a job's -passes= may name (job_passes.h), from the llvm
  // type's action table of this process's LLVM; set by init().
  const JobPasses& jobPasses() const { return jobPasses_; }

  // The default policy's native size for (kind, benchmark) if computed before.
  // The key includes a hash of the program, so inline programs sent under a
  // reused URI do not collide.
  std::optional<std::int64_t> cachedDefaultSize(const std::string& key) const;
  void storeDefaultSize(const std::string& key, std::int64_t size);

 private:
  mutable std::mutex mutex_;  // the network thread sets parameters while sessions read
  MlgoConfig config_;
  MlgoConfig ceiling_;  // the operator's: clients may only lower the time limits
  std::map<std::string, std::int64_t> defaultSizes_;
  std::set<std::string> acceptedModules_;  // bounded: cleared when full
  std::shared_ptr<datasets::SharedDatasetRegistry> sharedDatasets_;
  std::shared_ptr<const datasets::DatasetRegistry> datasets_;
  JobPasses jobPasses_ = JobPasses::of({});  // none until init()
};

// "<kind>|<uri>|<hash of bytes>": the key of cachedDefaultSize().
std::string defaultSizeKey(const std::string& kind, const Benchmark& benchmark);

}  // namespace kiln::mlgo_session
