// The llvm session type's programs run for real: a module built into an
// executable (in-process code generation, then the operator's linker; see
// programs/runs/program_build.h), run in the sandbox (programs/sandbox/sandbox.h) to time
// it, and validated against the benchmark as it came (programs/runs/validation.h).
// One per context, shared by its sessions, thread-safe: the sandbox is made
// on first use (its probe starts a process). Two bounded caches keyed by the
// module (its state's identity): the executables last built, so that
// IsBuildable, Buildtime, IsRunnable, Runtime and Validation of one state
// build it once, and the reference runs of a benchmark (its unoptimized
// build on each input), so that validating many states of one benchmark
// runs the reference once. Runtime measurements take turns on the
// context's measuring CPUs (programs/runs/measuring_cpus.h): never two on one CPU,
// and the build of the program happens before its CPU is taken.
#pragma once

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/kit/bounded_cache.h>
#include <kiln/kit/operator_settings.h>
#include <kiln/status.h>
#include "common/process/working_directory.h"
#include "compilers/llvm_engine/module_state.h"
#include "programs/runs/measuring_cpus.h"
#include "programs/runs/program_build.h"
#include "programs/runs/run_spec.h"
#include "programs/runs/timing.h"
#include "programs/runs/validation.h"
#include "programs/sandbox/sandbox.h"

namespace kiln::llvm_session {

inline constexpr std::string_view kProgramCachePrefix = "service.program_cache.";

struct ProgramBuild {
  Status status;                     // ok: it built
  std::chrono::nanoseconds time{0};  // code generation and link, when this IR was built
};

struct ValidationReport {
  bool asan = false;       // the ASan build ran too
  std::size_t inputs = 0;  // inputs compared
  std::vector<runs::ValidationError> errors;
  bool valid() const { return errors.empty(); }
  // {"valid": b, "inputs": n, "asan": b, "errors": [{"kind", "input", "message",
  // "evidence"}]}: the Validation observation.
  std::string json() const;
};

// A Runtime measurement: its samples and what they say, and where it ran.
struct RuntimeMeasurement {
  std::vector<double> samples;  // seconds, in the order they were run
  runs::RuntimeSummary summary;
  bool stable = false;  // the stopping rule's target was met
  unsigned batches = 0;
  int cpu = -1;                        // the measuring CPU (-1: unpinned)
  std::chrono::nanoseconds queued{0};  // waited in line for it
};

class ProgramRuns {
 public:
  // `cpus`: the measuring CPUs; none = the host's, as the operator set them
  // (--runtime-cpus, --runtime-cpu-locks), made on the first measurement.
  ProgramRuns(const OperatorSettings& settings, std::filesystem::path workingDirectory,
              std::shared_ptr<runs::MeasuringCpus> cpus = nullptr);

  // Builds the state's module: Buildtime, IsBuildable. The time is that of
  // the build the executable cache holds (the first of this IR and libraries).
  ProgramBuild build(const llvm_engine::ModuleState& state, const runs::RunSpec& spec);
  // Wall times in seconds of the spec's first input as `rule` says (batches
  // of runs, each in one sandbox after one unmeasured run: the page cache,
  // the dynamic loader), all on one measuring CPU held from the first batch
  // to the last. invalid-argument when the program does not build or a run
  // fails (its exit code, signal or timeout named); overloaded when no
  // measuring CPU came free in time.
  Result<RuntimeMeasurement> measure(const llvm_engine::ModuleState& state,
                                     const runs::RunSpec& spec, const runs::StoppingRule& rule,
                                     const sandbox::SandboxLimits& limits);
  // `runs` samples, no stopping rule: measure()'s samples.
  Result<std::vector<double>> runtimes(const llvm_engine::ModuleState& state,
                                       const runs::RunSpec& spec, unsigned runs,
                                       const sandbox::SandboxLimits& limits);
  // The measuring CPUs (made now if need be): the host's refusal as it came.
  Result<runs::MeasuringCpus*> measuringCpus();
  // Whether the program builds and runs its first input to an exit of its
  // own (any code) within the limits.
  Result<bool> runnable(const llvm_engine::ModuleState& state, const runs::RunSpec& spec,
                        const sandbox::SandboxLimits& limits);
  // Every input of `spec` run by `candidate` (and by its ASan build when
  // `asan`) and by `reference`, the benchmark as it came.
  Result<ValidationReport> validate(const llvm_engine::ModuleState& candidate,
                                    const llvm_engine::ModuleState& reference,
                                    const runs::RunSpec& spec, const sandbox::SandboxLimits& limits,
                                    bool asan);

  // The executable cache's bounds and counters: the worker parameters
  // service.program_cache.* (set_max_size 0: every observation builds, as
  // the runtime bench measures a new state's cost).
  CacheControls& executableCache() { return executables_; }

 private:
  // A build of one IR with one spec's libraries, or why it failed.
  struct Executable {
    std::string cacheKey;
    std::optional<WorkingDirectory> directory;  // removed with the last holder
    runs::BuiltProgram program;
    std::chrono::nanoseconds time{0};  // code generation and link
    Status status;
    std::uint64_t fileBytes = 0;
    const std::string& key() const { return cacheKey; }
    std::uint64_t sizeInBytes() const { return fileBytes + cacheKey.size(); }
  };
  struct ReferenceRuns {
    std::string cacheKey;
    std::vector<runs::RunEvidence> runs;
    const std::string& key() const { return cacheKey; }
    std::uint64_t sizeInBytes() const;
  };
  // The executable of the state's module, from the cache or built now.
  Result<std::shared_ptr<const Executable>> executable(const llvm_engine::ModuleState& state,
                                                       const runs::RunSpec& spec, bool asan);
  std::shared_ptr<const Executable> buildExecutable(const llvm::Module& module,
                                                    const runs::RunSpec& spec, bool asan,
                                                    std::string key);
  Result<const sandbox::Sandbox*> sandboxOnce();
  // One batch of `runs` samples on `cpu`, appended to `seconds`.
  Status timeBatch(const Executable& built, const runs::RunSpec& spec, unsigned runs,
                   const sandbox::SandboxLimits& limits, int cpu, std::vector<double>& seconds);
  Result<sandbox::SandboxOutcome> run(const Executable& executable, const runs::ProgramInput& input,
                                      unsigned repeats, const sandbox::SandboxLimits& limits,
                                      bool asan, int cpu = -1);
  Result<std::vector<runs::RunEvidence>> referenceRuns(const llvm_engine::ModuleState& reference,
                                                       const runs::RunSpec& spec,
                                                       const sandbox::SandboxLimits& limits);

  const runs::LinkSettings link_;
  const bool requireNamespaces_;
  const unsigned measuringCores_;
  const std::string cpuLocks_;
  const std::filesystem::path workingDirectory_;
  std::mutex mutex_;
  std::optional<Result<sandbox::Sandbox>> sandbox_;
  std::shared_ptr<runs::MeasuringCpus> cpus_;
  BoundedCache<Executable> executables_{16, std::uint64_t{512} << 20};
  BoundedCache<ReferenceRuns> references_{1024, std::uint64_t{64} << 20};
};

// A sandbox outcome's first run as validation's evidence.
runs::RunEvidence evidenceOf(const sandbox::SandboxOutcome& outcome);

}  // namespace kiln::llvm_session
