// The `llvm` type's cache of exact step transitions, shared by every session
// of a worker: (identity of the state before a step, pass index) -> what the
// step did ("no change", or the state it led to, serialized) and what running
// it cost. RL training revisits states constantly (every episode starts from
// the same benchmark, agents repeat prefixes and no-effect passes), so a step
// seen before, in any session, replays without running the pass.
//
// Exact by construction: a state's identity (ModuleState::identity()) is a
// BLAKE3 hash of its name and the bitcode its module was read from, and the
// module a step leads to depends on nothing else (ModuleState::reload()).
// Failed steps (a broken module, an LLVM crash) are never recorded: they run
// again and fail again with the same error. Only steps that cost more than a
// hit would are recorded (worthRecording), so cheap passes never pay for
// copies and memory. A BoundedCache: bounded in entries and bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <kiln/clock.h>
#include <kiln/kit/bounded_cache.h>
#include <kiln/kit/cache_parameters.h>
#include "compilers/llvm_engine/module_state.h"

namespace kiln::llvm_session {

class Transition {
 public:
  // `after` is empty when the step left the bytes as they were.
  Transition(std::string key, bool changed, std::optional<llvm_engine::SerializedModule> after,
             llvm_engine::StateDigest afterIdentity, Duration cost);

  const std::string& key() const { return key_; }
  bool changed() const { return changed_; }
  const llvm_engine::SerializedModule* after() const { return after_ ? &*after_ : nullptr; }
  const llvm_engine::StateDigest& afterIdentity() const { return afterIdentity_; }
  Duration cost() const { return cost_; }  // of the fresh step that was recorded
  std::uint64_t sizeInBytes() const;

 private:
  const std::string key_;
  const bool changed_;
  const std::optional<llvm_engine::SerializedModule> after_;
  const llvm_engine::StateDigest afterIdentity_;
  const Duration cost_;
};

using TransitionCache = BoundedCache<Transition>;

// The cache key of applying pass `pass` to the state `before`.
std::string transitionKey(const llvm_engine::StateDigest& before, std::size_t pass);

// What a hit costs: a lookup, and when the step changed the bytes, a copy of
// the resulting state, a fresh LLVMContext and the read of its bitcode on
// first use (a fresh step reads it too, but a hit moves that read later, so
// it is counted against the hit). From llvm_engine_microbench on a 2-core x86-64
// host ("hit: adopt" ~4 us, "hit: adopt+first use" ~35-40 ns per byte of
// bitcode), rounded up.
struct HitCostModel {
  Duration lookup = std::chrono::microseconds(3);
  Duration newContext = std::chrono::microseconds(5);
  double copyNanosPerByte = 0.5;          // bitcode + text
  double readNanosPerBitcodeByte = 40.0;  // parseBitcodeFile, per byte of bitcode
};

// Policy (pure): the estimated cost of a hit on a transition that replaces
// the module by `bitcodeBytes` of bitcode and `textBytes` of text (both 0
// for a step that left the bytes as they were).
Duration estimatedHitCost(const HitCostModel& model, bool replacesModule,
                          std::uint64_t bitcodeBytes, std::uint64_t textBytes);
// Policy (pure): record a fresh step only if it cost more than a hit would.
bool worthRecording(Duration freshCost, Duration hitCost);

// How one step runs when it is not replayed (ModuleState::applyPass by
// default; tests substitute failing steps).
using RunStep = std::function<Result<llvm_engine::PassOutcome>(llvm_engine::ModuleState& state,
                                                               std::size_t pass)>;

struct StepThroughCache {
  llvm_engine::PassOutcome outcome;
  bool hit = false;
};

// Mechanism: applies pass `pass` to `state`, replayed from `cache` when the
// transition is known, otherwise run (by `run`), timed with `clock` and
// recorded if worthRecording. Errors are those of the fresh step; the state
// is then as the fresh step left it.
Result<StepThroughCache> applyPassThroughCache(llvm_engine::ModuleState& state, std::size_t pass,
                                               TransitionCache& cache, const HitCostModel& model,
                                               const Clock& clock, const RunStep& run = {});

// Worker-level parameters service.transition_cache.* (the same keys as the
// parsed-module cache's, see include/kiln/kit/cache_parameters.h). Setting either
// bound to 0 disables the cache.
inline constexpr std::string_view kTransitionCachePrefix = "service.transition_cache.";

}  // namespace kiln::llvm_session
