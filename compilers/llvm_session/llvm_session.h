// The `llvm` session type: LLVM 19 pass ordering as CompilerGym's llvm-v0.
// Two action spaces (llvm_engine::kActionSpaces): "PassesAll", the default, holds
// the single passes of llvmenv's PassTable (named as LLVM names the pass,
// aliased by its CompilerGym flag, its exact `-passes=` text in the space's
// metadata), as CompilerGym's does; "PassesAndPipelines" has the same
// actions at the same indices, then the registry entries that run a whole
// pipeline (scc-oz-module-inliner). One action runs its text on the
// session's module with the new pass manager, as `opt-19 -passes=` does;
// "actionHadNoEffect" is exact (IR text unchanged). A step that this state
// (by exact identity) took before, in any session of the worker, is
// replayed from the context's transition cache instead of run
// (compilers/llvm_session/transition_cache.h), with the same outcome and state. After
// every action the module is verified: a pass that breaks it or crashes LLVM
// ends the episode with a compile error naming the pass (the worker keeps
// serving). Fork clones the module into a new LLVMContext and copies the
// reward state, so the fork steps independently.
//
// Observation spaces, and where each value comes from (cheapest first):
//   Ir, IrSha1, Bitcode            cached by ModuleState until the IR changes
//   IrInstructionCount, InstCount(Dict), Autophase(Dict)
//                                  one walk over the module (microseconds)
//   ObjectTextSizeBytes            in-process codegen (milliseconds), cached
//                                  until the IR changes
//   Programl                       the program graph (common/types/program_graph.h):
//                                  one walk, cached with the state until the
//                                  IR changes and in the context by the
//                                  state's identity
//   IrInstructionCountO0/O3/Oz, ObjectTextSizeO0/O3/Oz
//                                  the benchmark's baselines, computed once per
//                                  benchmark by the context, shared by sessions
//   Buildtime, IsBuildable         the module built into an executable (codegen
//                                  and the operator's linker), seconds / 0 or 1
//   IsRunnable                     ... and its first input run to an exit of
//                                  its own in the sandbox (0 or 1)
//   Runtime, RuntimeO3             wall times (seconds) of llvm.runtime_runs
//                                  runs of the first input (after one
//                                  unmeasured run), of this state / of the
//                                  benchmark at -O3 (measured once a session
//                                  and stopping rule), on a measuring CPU of
//                                  their own (programs/runs/measuring_cpus.h); with
//                                  llvm.runtime_target, more batches until the
//                                  median is that precise
//                                  (compilers/llvm_session/runtime_observation.h)
//   Validation                     JSON: every input of the run spec run by
//                                  this state and by the benchmark as it came
//                                  (and by an ASan build when llvm.validate_asan
//                                  is 1), compared (compilers/llvm_session/program_runs.h)
//   Reward:RuntimeO3               double: the change of the speedup over -O3
//                                  (median RuntimeO3 / median Runtime) since the
//                                  last observation of it (the start: the
//                                  unoptimized benchmark's speedup); the median
//                                  is the point estimate, as in CompilerGym's
//                                  RuntimePointEstimateReward
//   RuntimeStats                   dict: one Runtime measurement's samples,
//                                  median, spread, the median's confidence
//                                  interval, whether it met llvm.runtime_target,
//                                  the CPU it ran on and its wait for it
//   Reward:<cost>                  double: the drop of <cost> since the last
//                                  observation of the same reward space (the
//                                  start is the benchmark's unoptimized cost),
//                                  as CompilerGym's rewards (compilers/llvm_engine/rewards.h).
// Rewards are computed on the worker at observation time, not after every
// action: a step that observes no reward pays nothing for it, a multi-action
// step pays once, and the cost at the start comes from the benchmark's cached
// O0 baseline (the state at init IS the unoptimized benchmark), so a new
// session pays no codegen until it asks for a size reward.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include <kiln/kit/compilation_session.h>
#include <kiln/sandbox_limits.h>
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_session/llvm_context.h"
#include "compilers/llvm_session/runtime_observation.h"
#include "programs/runs/run_spec.h"

namespace kiln::llvm_session {

class LlvmSession final : public CompilationSession {
 public:
  static constexpr const char* kSessionTypeName = "llvm";

  explicit LlvmSession(LlvmContext& context) : context_(context) {}

  std::vector<Space> actionSpaces() const override;
  std::vector<Space> observationSpaces() const override;
  std::string compilerVersion() const override;
  // Passes are deterministic: a lost session is rebuilt by replaying its
  // passes, and the canonical IR's hash proves the rebuilt module is the same.
  ReplayPolicy replayPolicy() const override { return {true, "IrSha1"}; }

  Status init(std::size_t actionSpaceIndex, const Benchmark& benchmark) override;
  Status initAsFork(const CompilationSession& parent) override;
  Status applyAction(const Value& action, ActionOutcome& outcome) override;
  Status computeObservation(std::size_t spaceIndex, Value& observation) override;
  // llvm.runtime_runs N (1 to the operator's --runtime-max-runs; default 5),
  // llvm.runtime_max_runs N and llvm.runtime_target X (repeat until stable:
  // compilers/llvm_session/runtime_observation.h),
  // llvm.run_spec JSON (programs/runs/run_spec.h: this benchmark's inputs),
  // llvm.validate_asan 0|1, and sandbox.* (a limit lowered for this session).
  Result<std::string> handleParameter(const std::string& key, const std::string& value) override;

 private:
  // The four reward spaces, in the order of observationSpaces().
  enum Reward : std::size_t {
    kIrCount,
    kIrCountOz,
    kTextSize,
    kTextSizeOz,
    kRewardCount,
  };
  Result<Value> observe(std::size_t spaceIndex);
  Result<Value> observeProgram(std::size_t spaceIndex);
  Result<Value> programGraph();
  Result<double> reward(Reward which);
  // The benchmark's inputs: the client's (llvm.run_spec), else its
  // dataset's (read once a session).
  Result<runs::RunSpec> runSpec();
  // Runtime measurements under the session's stopping rule.
  Result<RuntimeMeasurement> measureRuntime(const llvm_engine::ModuleState& state);
  Result<RuntimeMeasurement> runtimeO3();
  Result<double> runtimeReward();
  Result<llvm_engine::Baselines> baselines() const {
    return context_.baselines(*episode_.benchmark);
  }

  LlvmContext& context_;
  // The module as the actions left it; a fork clones it.
  std::unique_ptr<llvm_engine::ModuleState> state_;
  // Everything else a session holds, copied whole by a fork: a member added
  // here is forked without anyone having to remember it.
  struct Episode {
    std::shared_ptr<const CachedModule> benchmark;
    Benchmark source;             // the URI and bytes the session started from
    std::size_t actionSpace = 0;  // index into llvm_engine::kActionSpaces
    // The cost when each reward space was last observed; nullopt = the
    // benchmark's unoptimized cost (not observed yet).
    std::array<std::optional<std::int64_t>, kRewardCount> lastCost;
    // Running the program (Runtime, Validation): this session's settings.
    sandbox::SandboxLimits limits;
    RuntimeSettings runtimeSettings;
    bool validateAsan = false;
    std::optional<runs::RunSpec> clientRunSpec;
    std::optional<runs::RunSpec> datasetRunSpec;
    // Measured once a session and stopping rule.
    std::optional<std::pair<runs::StoppingRule, RuntimeMeasurement>> runtimeO3;
    std::optional<double> lastSpeedup;  // Reward:RuntimeO3
  };
  Episode episode_;
};

}  // namespace kiln::llvm_session
