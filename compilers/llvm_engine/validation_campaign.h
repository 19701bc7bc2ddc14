// A validation campaign: does every action keep the program's behaviour?
// Sequences of actions (compilers/llvm_engine/validation_plan.h) run on runnable programs;
// each final state's program is run on every input and compared with the
// program as it came (a BehaviourCheck: compilers/llvm_session/campaign_check.h runs
// it for real). When one behaves differently, its prefixes are checked to
// find the first action after which the behaviour goes wrong: that action
// miscompiled (given the actions before it), and the prefix reproduces it.
//
// Mechanism: `threads` threads take sequences in plan order, each stepping
// states of its own (one LLVM context each); the check must be thread-safe.
// A state already checked (same program, same identity) is not checked
// again, so a pass that changed nothing costs no program run. The report
// is aggregated in plan order, the same whatever the threads' timing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "compilers/llvm_engine/action_campaign.h"
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/validation_plan.h"

namespace kiln::llvm_engine {

// What running a state's program showed.
struct Behaviour {
  bool preserved = true;
  std::string kind;     // of the first difference: "output", "exit-status", "sanitizer", ...
  std::string message;  // what differed, on which input, and the evidence
};

// Runs `candidate`'s program and compares it with program `program` as it
// came (`reference`, the caller's own state of it). An error means it could
// not tell (the host's trouble, a reference that does not run), never that
// the behaviour differs.
using BehaviourCheck = std::function<Result<Behaviour>(
    std::size_t program, const ModuleState& reference, const ModuleState& candidate)>;

struct ValidationOptions {
  PlanOptions plan;
  // Registry passes that are no actions, run as if they were (e.g. a denied
  // pass, to show why it was denied).
  std::vector<std::string> putBack;
  std::chrono::milliseconds timeLimit{0};  // stop starting sequences after it (0: none)
  unsigned threads = 2;
  std::size_t keepReproducers = 100;
};

struct PassVerdicts {
  std::string pass;
  bool putBack = false;           // not an action of the table
  std::uint64_t tried = 0;        // checked sequences it ran in (up to the first miscompile)
  std::uint64_t changed = 0;      // ... of which it changed the module at least once
  std::uint64_t miscompiles = 0;  // sequences that first behaved differently after it
  std::uint64_t broke = 0;        // LLVM crashed or the module was invalid after it
};

struct FamilyVerdicts {
  SequenceFamily family;
  std::uint64_t sequences = 0;  // checked
  std::uint64_t miscompiles = 0;
};

// A miscompile and the shortest prefix of its sequence that shows it.
struct Reproducer {
  std::string program;
  SequenceFamily family;
  std::vector<std::string> sequence;  // the culprit last
  std::string kind;
  std::string message;
};

struct ExcludedProgram {
  std::string program;
  std::string reason;  // why it cannot be validated (no main, its reference fails, ...)
};

struct ValidationCampaignReport {
  std::uint64_t planned = 0;
  std::uint64_t sequences = 0;        // run to their end and checked
  std::uint64_t unchanged = 0;        // ... of which left the program as it came (nothing to run)
  std::uint64_t checks = 0;           // distinct states whose program was built and run
  std::uint64_t miscompiles = 0;      // sequences whose program behaved differently
  std::uint64_t broken = 0;           // sequences where LLVM crashed or broke the module
  std::uint64_t checkErrors = 0;      // sequences that could not be checked
  std::vector<std::string> programs;  // validated
  std::vector<ExcludedProgram> excluded;
  std::vector<PassVerdicts> passes;  // one per action, actions' order
  std::vector<FamilyVerdicts> families;
  std::vector<Reproducer> reproducers;  // at most keepReproducers, plan order
  std::vector<std::string> errors;      // the first few check errors
  double seconds = 0;
};

// First checks every program against itself (it builds, runs every input
// and behaves the same twice): one that does not is excluded with the
// reason. invalid-argument if a program does not parse, for a bad plan or
// put-back name, or when no program is left to validate.
Result<ValidationCampaignReport> runValidationCampaign(
    const std::shared_ptr<const PassTable>& table, const std::vector<CampaignProgram>& programs,
    const BehaviourCheck& check, const ValidationOptions& options);

}  // namespace kiln::llvm_engine
