// The validation campaign's BehaviourCheck (compilers/llvm_engine/validation_campaign.h)
// run for real, with the machinery `kiln validate` and the Validation
// observation use (compilers/llvm_session/program_runs.h): each state's module built
// into an executable (and its ASan build), run in the sandbox on every input
// of its program's run spec, and compared with the program as it came.
#pragma once

#include <filesystem>
#include <vector>

#include <kiln/sandbox_limits.h>
#include <kiln/status.h>
#include "compilers/llvm_engine/validation_campaign.h"
#include "programs/runs/run_spec.h"

namespace kiln::llvm_session {

struct ProgramCheckOptions {
  bool asan = true;  // run the ASan build of every state too
  sandbox::SandboxLimits limits;
  std::string linker = "clang-19";
  std::filesystem::path scratch;  // where executables are built (empty: the temp dir)
};

// A thread-safe check of programs whose run specs are `specs` (one per
// campaign program, same order). It owns its sandbox and a working
// directory, removed when the last copy of the check goes.
Result<llvm_engine::BehaviourCheck> makeProgramCheck(std::vector<runs::RunSpec> specs,
                                                     const ProgramCheckOptions& options);

}  // namespace kiln::llvm_session
