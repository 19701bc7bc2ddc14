// A Step on a session that splits its actions (CompilationSession::
// splitActions), driven by the worker's loop across wake-ups. Sequence: start()
// on the loop begins the first action; while kWaiting the loop polls wait().fd
// and calls resume() when it is readable or wait().deadline passed; kOnPool
// hands runBlocking() to a pool thread; at kReady complete() builds the reply
// (on the loop only if quickToComplete(), else on the pool). Holds the request;
// the record must outlive it.
#pragma once

#include <optional>

#include "common/transport/frame.h"
#include "worker/session_ops.h"

namespace kiln {

enum class SplitPhase : int { kWaiting, kOnPool, kReady };

class SplitStep {
 public:
  using Phase = SplitPhase;

  // `split` is record.session's split-phase interface.
  SplitStep(SessionRecord& record, SplitActions& split, InboundMessage message)
      : record_(record), split_(split), message_(std::move(message)) {}

  Phase start();
  Phase resume();
  Phase runBlocking();
  // The reply (an error reply if the step failed or was rejected).
  Completion complete();
  // The remaining work after kReady is only quick observations.
  bool quickToComplete() const;

  const ActionWait& wait() const { return wait_; }
  std::uint64_t requestId() const { return state_.requestId; }
  SessionRecord& record() const { return record_; }

 private:
  // Begins actions until one waits or must go to the pool, or none is left.
  Phase beginActions();
  Phase fail(Completion reply);
  // Interprets one begin/continue result for the current action.
  std::optional<Phase> progressed(Result<ActionProgress> progress);

  SessionRecord& record_;
  SplitActions& split_;
  InboundMessage message_;
  StepState state_;
  ActionOutcome current_;  // of the action in progress
  ActionWait wait_;
  std::optional<Completion> failed_;
};

}  // namespace kiln
