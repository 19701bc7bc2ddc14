// The llvm session type's programs run for real: a module built into an
// executable (in-process code generation, then the operator's linker; see
// runtime/program_build.h), run in the sandbox (sandbox/sandbox.h) to time
// it, and validated against the benchmark as it came (runtime/validation.h).
// One per context, shared by its sessions, thread-safe: the sandbox is made
// on first use (its probe starts a process), and the reference runs of a
// benchmark (its unoptimized build on each input) are kept, so that
// validating many states of one benchmark runs the reference once.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/working_directory.h"
#include "kit/operator_settings.h"
#include "runtime/program_build.h"
#include "runtime/run_spec.h"
#include "runtime/validation.h"
#include "sandbox/sandbox.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::llvmsession {

struct ProgramBuild {
  Status status;                     // ok: it built
  std::chrono::nanoseconds time{0};  // code generation and link
};

struct ValidationReport {
  bool asan = false;       // the ASan build ran too
  std::size_t inputs = 0;  // inputs compared
  std::vector<runtime::ValidationError> errors;
  bool valid() const { return errors.empty(); }
  // {"valid": b, "inputs": n, "asan": b, "errors": [{"kind", "input", "message",
  // "evidence"}]}: the Validation observation.
  std::string json() const;
};

class ProgramRuns {
 public:
  ProgramRuns(const OperatorSettings& settings, std::filesystem::path workingDirectory);

  // Builds `module` (and throws the executable away): Buildtime, IsBuildable.
  ProgramBuild build(const llvm::Module& module, const runtime::RunSpec& spec);
  // Wall times in seconds of `runs` runs of the spec's first input, after
  // one unmeasured run (the page cache, the dynamic loader), one sandbox for
  // all. failed-precondition-like invalid-argument when the program does not
  // build or a run fails (its exit code, signal or timeout named).
  Result<std::vector<double>> runtimes(const llvm::Module& module, const runtime::RunSpec& spec,
                                       unsigned runs, const sandbox::SandboxLimits& limits);
  // Whether the program builds and runs its first input to an exit of its
  // own (any code) within the limits.
  Result<bool> runnable(const llvm::Module& module, const runtime::RunSpec& spec,
                        const sandbox::SandboxLimits& limits);
  // Every input of `spec` run by `candidate` (and by its ASan build when
  // `asan`) and by `reference`, the benchmark as it came, whose runs are
  // kept under `referenceKey`.
  Result<ValidationReport> validate(const llvm::Module& candidate, const llvm::Module& reference,
                                    const std::string& referenceKey, const runtime::RunSpec& spec,
                                    const sandbox::SandboxLimits& limits, bool asan);

 private:
  struct Executable {
    WorkingDirectory directory;
    runtime::BuiltProgram program;
    std::chrono::nanoseconds codegenTime{0};
  };
  Result<Executable> buildExecutable(const llvm::Module& module, const runtime::RunSpec& spec,
                                     bool asan);
  Result<const sandbox::Sandbox*> sandboxOnce();
  Result<sandbox::SandboxOutcome> run(const Executable& executable,
                                      const runtime::ProgramInput& input, unsigned repeats,
                                      const sandbox::SandboxLimits& limits, bool asan,
                                      int cpu = -1);
  Result<std::vector<runtime::RunEvidence>> referenceRuns(const llvm::Module& reference,
                                                          const std::string& key,
                                                          const runtime::RunSpec& spec,
                                                          const sandbox::SandboxLimits& limits);

  const runtime::LinkSettings link_;
  const bool requireNamespaces_;
  const std::filesystem::path workingDirectory_;
  std::mutex mutex_;
  std::optional<Result<sandbox::Sandbox>> sandbox_;
  std::map<std::string, std::vector<runtime::RunEvidence>> references_;
};

// A sandbox outcome's first run as validation's evidence.
runtime::RunEvidence evidenceOf(const sandbox::SandboxOutcome& outcome);

}  // namespace kiln::llvmsession
