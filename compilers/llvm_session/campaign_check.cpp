#include "compilers/llvm_session/campaign_check.h"

#include <fmt/format.h>

#include <memory>

#include <kiln/kit/operator_settings.h>
#include "common/process/working_directory.h"
#include "compilers/llvm_session/program_runs.h"

namespace kiln::llvm_session {
namespace {

// The working directory outlives the runs that build into it.
struct CheckState {
  WorkingDirectory directory;
  std::vector<runs::RunSpec> specs;
  ProgramCheckOptions options;
  ProgramRuns runs;

  CheckState(WorkingDirectory dir, std::vector<runs::RunSpec> programSpecs,
             const ProgramCheckOptions& checkOptions, const OperatorSettings& settings)
      : directory(std::move(dir)),
        specs(std::move(programSpecs)),
        options(checkOptions),
        runs(settings, directory.path()) {}
};

// Executing a program another thread's child still holds open for writing
// fails with ETXTBSY; the sandbox opens its copies close-on-exec, which
// leaves only the instant between another thread's fork and exec: try again.
constexpr int kAttempts = 3;

bool textFileBusy(const Status& status) {
  return status.message().find("Text file busy") != std::string::npos;
}

llvm_engine::Behaviour behaviourOf(const ValidationReport& report) {
  if (report.valid()) return {};
  const runs::ValidationError& first = report.errors.front();
  std::string message = first.message;
  if (!first.evidence.empty()) message += " (" + first.evidence + ")";
  if (report.errors.size() > 1) {
    message += fmt::format("; {} more difference(s)", report.errors.size() - 1);
  }
  return {false, runs::kindName(first.kind), std::move(message)};
}

}  // namespace

Result<llvm_engine::BehaviourCheck> makeProgramCheck(std::vector<runs::RunSpec> specs,
                                                     const ProgramCheckOptions& options) {
  KILN_ASSIGN_OR_RETURN(WorkingDirectory directory,
                        WorkingDirectory::create(options.scratch, "kiln-campaign"));
  OperatorSettings settings;
  settings.runtimeLinker = options.linker;
  auto state =
      std::make_shared<CheckState>(std::move(directory), std::move(specs), options, settings);
  return llvm_engine::BehaviourCheck(
      [state](std::size_t program, const llvm_engine::ModuleState& reference,
              const llvm_engine::ModuleState& candidate) -> Result<llvm_engine::Behaviour> {
        if (program >= state->specs.size()) {
          return invalidArgument(fmt::format("no run spec for campaign program {}", program));
        }
        Result<ValidationReport> validated = internalError("not run");
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          validated = state->runs.validate(candidate, reference, state->specs[program],
                                           state->options.limits, state->options.asan);
          if (validated.ok() || !textFileBusy(validated.status())) break;
        }
        KILN_ASSIGN_OR_RETURN(ValidationReport report, std::move(validated));
        // The program as it came failed: there is nothing to compare with.
        for (const runs::ValidationError& error : report.errors) {
          if (error.kind == runs::ValidationError::Kind::kReferenceFailed) {
            return invalidArgument(error.message);
          }
        }
        return behaviourOf(report);
      });
}

}  // namespace kiln::llvm_session
