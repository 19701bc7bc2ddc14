// The two builds an MLGO episode is set beside, on the same module, compiler
// and flags as the episode: the reference build (every decision answered with
// DefaultAdvice through the interactive channel, what Reward:NativeSizeSaved
// is judged against, so that an agent answering DefaultAdvice earns 0) and
// LLVM's default build (the advisor's own heuristic, no channel). They differ
// where LLVM's ML advisors decide without asking (docs/mlgo.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "compilers/mlgo_channel/advisor_kind.h"
#include "compilers/mlgo_session/kill_switch.h"
#include "compilers/mlgo_session/module_flags.h"

namespace kiln::mlgo_session {

// The module's flags each advisor's compiler takes: the target for opt (the
// inliner's pipeline stays kiln's), everything llcFlags() maps for llc.
std::vector<std::string> advisorModuleFlags(mlgo_channel::AdvisorKind kind,
                                            const ModuleToolFlags& flags);

struct BuildRequest {
  mlgo_channel::AdvisorKind kind = mlgo_channel::AdvisorKind::kInliner;
  std::string compiler;                 // empty = the advisor's opt-19 / llc-19
  std::filesystem::path input;          // LLVM IR or bitcode
  std::vector<std::string> flags;       // the module's (advisorModuleFlags())
  std::filesystem::path workDirectory;  // must exist; the build's files are removed
  std::string stem = "reference";       // names of the build's files
  TimePoint deadline;                   // steady clock, for the whole build
  std::optional<std::uint64_t> memoryLimitBytes;
  KillSwitch* killSwitch = nullptr;  // optional; armed with the compiler
};

struct Build {
  std::string output;           // the bitcode (inliner) or object (eviction) bytes
  std::int64_t nativeSize = 0;  // .text bytes of the output (native_size.h)
  std::int64_t decisions = 0;   // decisions answered; 0 for LLVM's default build
};

// Every decision answered with the reference answer (mlgo_channel::referenceAnswerAt:
// the compiler's own decision for the inliner, kiln's fixed policy for eviction).
Result<Build> referenceBuild(const BuildRequest& request);

// The advisor's pipeline with LLVM's default advisor (mlgo_channel::llvmDefaultArguments).
Result<Build> llvmDefaultBuild(const BuildRequest& request);

}  // namespace kiln::mlgo_session
