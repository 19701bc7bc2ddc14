// The actions of the llvm env: every LLVM pass that can run on its own over a
// module, read from LLVM's own pass registry (PassBuilder::printPassNames) at
// run time, filtered, and sorted so that the same LLVM gives the same
// indices. An action runs exactly the text `opt-19 -passes=<pipeline>` gets,
// which is its registry name except for the few the table notes. Single
// passes come first (the default action space, as CompilerGym's); registry
// entries that run a whole pipeline follow, in a second space whose first
// indices mean the same. Immutable once built; share one table between
// threads and states.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::llvm_engine {

enum class PassKind { kModule, kCgscc, kFunction, kLoopNest, kLoop };

std::string_view passKindName(PassKind kind);

// The action spaces of the llvm session type, by index. Each is a prefix of
// the table (PassTable::spaceSize), so index i names the same action in
// every space that has i.
struct ActionSpaceDescription {
  std::string_view name;
  std::string_view summary;
};
inline constexpr std::array<ActionSpaceDescription, 2> kActionSpaces = {{
    {"PassesAll", "single passes, as CompilerGym's llvm-v0 action space"},
    {"PassesAndPipelines",
     "PassesAll's actions at the same indices, then registry entries that run a pipeline of "
     "passes in one step"},
}};

struct PassInfo {
  std::string name;  // the action's name: the registry name, e.g. "licm"
  PassKind kind;     // the registry section it was listed in
  // Exactly the text the action gives LLVM's pass-pipeline parser, as
  // `opt-19 -passes='<pipeline>'` would: the registry name itself but for
  // the few actions with a `note`. Never a printed pipeline: printing drops
  // parameters (-Oz's inline threshold of scc-oz-module-inliner).
  std::string pipeline;
  // CompilerGym's flag for the same pass (e.g. "-functionattrs" for
  // function-attrs), else "-<name>": what `opt -<flag>` users typed.
  std::string flag;
  // The transformation passes `pipeline` runs (passesRunBy): one for a single
  // pass ("inline" for inliner-wrapper), several for a pipeline.
  std::vector<std::string> runs;
  // Why `pipeline` is not the bare name (or the name not the registry's), "".
  std::string note;
  // The pass handles only `br` terminators and LLVM 19 has no pass that
  // removes invoke, indirectbr or callbr without changing behaviour: it is
  // refused (invalid argument, the state unchanged) on a module with one.
  bool needsBranchTerminators = false;

  bool isPipeline() const { return runs.size() > 1; }
};

// Why a registry entry is not an action (for documentation and tests).
struct DroppedPass {
  std::string name;
  std::string reason;
};

class PassTable {
 public:
  // Which passes a table leaves out besides those that never belong in it.
  enum class Crashers {
    kLeftOut,  // passes that crash LLVM 19 on valid modules are not actions
    // ... unless the operator plants crashes on purpose
    // (--enable-fault-injection): a real LLVM crash for the crash tests.
    kKept,
  };
  // Builds the table from the registry of the LLVM this process is linked
  // against. Fails (internal) only if that registry lists nothing usable.
  static Result<std::shared_ptr<const PassTable>> fromRegistry(
      Crashers crashers = Crashers::kLeftOut);

  std::size_t size() const { return passes_.size(); }
  const PassInfo& at(std::size_t index) const { return passes_.at(index); }
  const std::vector<PassInfo>& passes() const { return passes_; }
  const std::vector<DroppedPass>& dropped() const { return dropped_; }
  std::optional<std::size_t> find(std::string_view name) const;

  // How many actions action space `space` (an index into kActionSpaces) has:
  // its actions are indices [0, spaceSize(space)). 0 for no such space.
  std::size_t spaceSize(std::size_t space) const;
  // The single passes: indices [0, singlePassCount()); pipelines follow.
  std::size_t singlePassCount() const { return singlePasses_; }

  // SHA-1 over the LLVM version, every (name, pipeline) in order and the
  // spaces' sizes: two processes with equal fingerprints agree on what every
  // index of every space means.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::vector<PassInfo> passes_;
  std::vector<DroppedPass> dropped_;
  std::size_t singlePasses_ = 0;
  std::string fingerprint_;
};

}  // namespace kiln::llvm_engine
