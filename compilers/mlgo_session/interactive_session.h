// The session types "mlgo-inline" (opt-19's ML inliner) and "mlgo-regalloc"
// (llc-19's eviction advisor). init() starts the compiler on the benchmark and
// stops at its first decision; each step answers one decision and stops at the
// next; the episode ends when the compiler exits, after which the native size,
// the reference build's size (every decision answered with DefaultAdvice), the
// size saved against it and LLVM's own default build's size are observable.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/kit/compilation_session.h>
#include "compilers/mlgo_channel/interactive_compiler.h"
#include "compilers/mlgo_session/kill_switch.h"
#include "compilers/mlgo_session/mlgo_context.h"
#include "compilers/mlgo_session/reference_build.h"

namespace kiln::mlgo_session {

class MlgoInteractiveSession : public CompilationSession, public SplitActions {
 public:
  MlgoInteractiveSession(MlgoContext& context, mlgo_channel::AdvisorKind kind);
  ~MlgoInteractiveSession() override;

  std::vector<Space> actionSpaces() const override;
  // One space per feature of LLVM 19's header, in wire order, then the
  // spaces named in ExtraObservation.
  std::vector<Space> observationSpaces() const override;
  std::string compilerVersion() const override { return "LLVM 19 interactive " + kindName(); }
  // The compiler is deterministic for the same module and answers (fork
  // relies on it too): a lost session is rebuilt by replaying its answers.
  ReplayPolicy replayPolicy() const override { return {true, ""}; }

  Status init(std::size_t actionSpaceIndex, const Benchmark& benchmark) override;
  // Replays the parent's decisions in a new compiler process.
  Status initAsFork(const CompilationSession& parent) override;
  Status applyAction(const Value& action, ActionOutcome& outcome) override;
  Status computeObservation(std::size_t spaceIndex, Value& observation) override;
  void cancel() override { killSwitch_.fire(); }

  // Split-phase steps: the answer is written on the worker's loop, which then
  // polls the compiler's output and parses the next decision there once it
  // is whole; the end of the episode (exit, size measurement) and every
  // failure that needs diagnosing go to a pool thread.
  SplitActions* splitActions() override { return this; }
  Result<ActionProgress> beginAction(const Value& action, ActionOutcome& outcome,
                                     ActionWait& wait) override;
  Result<ActionProgress> continueAction(ActionOutcome& outcome, ActionWait& wait) override;
  Status finishAction(ActionOutcome& outcome) override;
  bool quickObservation(std::size_t spaceIndex) const override;

  // Observation spaces after the features, in this order.
  // DefaultNativeSize is the reference build's (reference_build.h), the
  // reward's baseline; LlvmDefaultNativeSize is LLVM's default advisor's.
  static constexpr const char* kExtraObservations[] = {"Features",
                                                       "DefaultAdvice",
                                                       "NativeSize",
                                                       "DefaultNativeSize",
                                                       "Reward:NativeSizeSaved",
                                                       "Decisions",
                                                       "LlvmDefaultNativeSize"};

 private:
  std::string kindName() const;
  // Starts a compiler and answers `replay` (a fork's history) before stopping
  // at the first decision that has no answer yet.
  Status startCompiler(const std::vector<std::int64_t>& replay);
  // Reads the next decision; at the end, collects the result and the sizes.
  Status advance();
  // Checks and sends the answer to the pending decision.
  Status answer(std::int64_t answer);
  Status finishEpisode();
  // Ends the episode for good: kills the compiler, and turns the failure
  // into a compile-error (the worker then ends the session).
  Status fail(const Status& status, const std::string& during);
  Result<std::int64_t> defaultAdvice() const;
  Result<std::int64_t> defaultNativeSize();
  Result<std::int64_t> llvmDefaultNativeSize();
  // The flags and limits of this session's compiler, for a build beside it.
  BuildRequest buildRequest(const std::string& stem);
  TimePoint decisionDeadline() const;

  MlgoContext& context_;
  mlgo_channel::AdvisorKind kind_;
  MlgoConfig config_;
  Benchmark benchmark_;
  ModuleToolFlags moduleFlags_;      // from the module's .cmd (a corpus module's own flags)
  std::filesystem::path directory_;  // private to this session, removed on destruction
  std::filesystem::path input_;
  std::optional<mlgo_channel::InteractiveCompiler> compiler_;
  std::optional<mlgo_channel::Observation> pending_;  // the decision waiting for an answer
  std::vector<std::int64_t> history_;                 // answers given, for forks
  bool ended_ = false;
  std::optional<Status> failure_;
  std::int64_t nativeSize_ = 0;
  std::optional<std::int64_t> defaultNativeSize_;
  std::optional<std::int64_t> llvmDefaultNativeSize_;
  KillSwitch killSwitch_;
};

class MlgoInlineSession final : public MlgoInteractiveSession {
 public:
  static constexpr const char* kSessionTypeName = "mlgo-inline";
  explicit MlgoInlineSession(MlgoContext& context)
      : MlgoInteractiveSession(context, mlgo_channel::AdvisorKind::kInliner) {}
};

class MlgoRegallocSession final : public MlgoInteractiveSession {
 public:
  static constexpr const char* kSessionTypeName = "mlgo-regalloc";
  explicit MlgoRegallocSession(MlgoContext& context)
      : MlgoInteractiveSession(context, mlgo_channel::AdvisorKind::kRegallocEviction) {}
};

}  // namespace kiln::mlgo_session
