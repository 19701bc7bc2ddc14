// A random-search campaign over the action space, as a new user's random
// search would run it: episodes of random actions on given programs, every
// step verified, LLVM crashes caught by crash_guard.h so that the campaign
// survives to count them. It answers "is every action safe on every valid
// module": how many steps broke a module or crashed LLVM, on which pass and
// after which sequence (to reproduce with opt-19), and what each pass costs.
// In-process and single-threaded; after a caught crash the process is
// suspect (crash_guard.h), which is fine for a hunt, not for serving.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "compilers/llvm_engine/pass_table.h"

namespace kiln::llvm_engine {

struct CampaignProgram {
  std::string name;     // e.g. "kiln-bench-v0/quicksort"
  std::string bitcode;  // a valid module
};

struct CampaignOptions {
  unsigned episodes = 300;  // over the programs in turn
  unsigned steps = 30;      // random actions per episode
  std::uint64_t seed = 1;
  // Stops starting episodes after this long (0 = no limit).
  std::chrono::milliseconds timeLimit{0};
  // Failures kept with their sequence (all are counted).
  std::size_t keepFailures = 20;
};

enum class FailureKind { kInvalidModule, kCrash, kOtherError };

struct CampaignFailure {
  FailureKind kind;
  std::string program;
  std::vector<std::string> sequence;  // action names, the failing one last
  std::string message;
};

struct PassTiming {
  std::string pass;
  std::uint64_t runs = 0;
  std::uint64_t changed = 0;  // runs that changed the module
  double totalMs = 0;
  double maxMs = 0;
};

struct CampaignReport {
  std::uint64_t episodes = 0;
  std::uint64_t steps = 0;
  std::uint64_t invalidModules = 0;
  std::uint64_t crashes = 0;
  std::uint64_t otherErrors = 0;  // report_fatal_error and the like
  std::uint64_t refusals = 0;     // actions refused before running (needsBranchTerminators)
  std::vector<CampaignFailure> failures;
  std::vector<PassTiming> timings;  // one per action, in table order
  double seconds = 0;
};

// "invalid module", "crash" or "error".
std::string_view failureKindName(FailureKind kind);

// invalid-argument if there are no programs or one of them does not parse.
Result<CampaignReport> runActionCampaign(const std::shared_ptr<const PassTable>& table,
                                         const std::vector<CampaignProgram>& programs,
                                         const CampaignOptions& options);

}  // namespace kiln::llvm_engine
