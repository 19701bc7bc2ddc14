// The action space: every LLVM pass that can run on its own over a module,
// read from LLVM's own pass registry (PassBuilder::printPassNames) at run
// time, filtered, and sorted by name so that the same LLVM gives the same
// indices. Immutable once built; share one table between threads and states.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::llvmenv {

enum class PassKind { kModule, kCgscc, kFunction, kLoopNest, kLoop };

std::string_view passKindName(PassKind kind);

struct PassInfo {
  std::string name;      // registry name, e.g. "licm": the action's name
  PassKind kind;         // the registry section it was listed in
  std::string pipeline;  // explicit module pipeline, e.g. "function(loop-mssa(licm<...>))"
  // CompilerGym's flag for the same pass (e.g. "-functionattrs" for
  // function-attrs), else "-<name>": what `opt -<flag>` users typed.
  std::string flag;
  // A pass `pipeline` runs first because this one needs it (e.g.
  // "lower-switch" for unify-loop-exits), or "".
  std::string carries;
  // The pass handles only `br` terminators and LLVM 19 has no pass that
  // removes invoke, indirectbr or callbr without changing behaviour: it is
  // refused (invalid argument, the state unchanged) on a module with one.
  bool needsBranchTerminators = false;
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

  // SHA-1 over the LLVM version and every (name, pipeline) in order: two
  // processes with equal fingerprints agree on what every index means.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::vector<PassInfo> passes_;
  std::vector<DroppedPass> dropped_;
  std::string fingerprint_;
};

}  // namespace kiln::llvmenv
