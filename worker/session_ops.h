// The session RPCs as they run on a pool thread: each takes the decoded
// request, drives the CompilationSession and returns the encoded reply with
// what the loop must do next (insert a new session, retire this one). Input is
// validated here before any action is applied, so a bad Step changes nothing.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kiln/ids.h>
#include "common/transport/frame.h"
#include "worker/session_host.h"

namespace kiln {

// An error reply; `sessionOver` retires the session.
Completion errorCompletion(std::uint64_t requestId, const Status& status, bool sessionOver);
// An error from the compiler ends the session: its state is unknown.
bool endsSession(const Status& status);
Completion guardedFailure(std::uint64_t requestId, const kj::Exception& e);
Completion guardedFailure(std::uint64_t requestId, const std::exception& e);

// Runs `op`, turning exceptions (a malformed message read lazily, or a bug in
// a session type) into an error reply; a session that threw is retired.
template <class Op>
Completion guarded(std::uint64_t requestId, Op&& op) {
  try {
    return op();
  } catch (const kj::Exception& e) {
    return guardedFailure(requestId, e);
  } catch (const std::exception& e) {
    return guardedFailure(requestId, e);
  }
}

// A Step between its actions: what executeStep keeps on its stack, held in
// an object by the split-phase path (worker/split_step.h).
struct StepState {
  std::uint64_t requestId = 0;
  std::vector<Value> actions;  // decoded and checked against the action space
  std::size_t nextAction = 0;
  std::uint32_t applied = 0;
  ActionOutcome total;
  std::chrono::steady_clock::time_point actionsBegan;  // set once the request checked out
  std::chrono::steady_clock::duration actionTime{};    // set when the last action is done
};
// Checks the observation indices and decodes every action; the error reply
// when the request is bad (nothing was applied then).
std::optional<Completion> prepareStep(SessionRecord& record, const InboundMessage& message,
                                      StepState& state);
// Counts one applied action; true when the step has no action left to apply.
bool recordAction(SessionRecord& record, StepState& state, ActionOutcome& outcome);
// applyAction() for the actions not yet applied; the error reply on failure.
// The reply to a step whose action failed: an error, or, when earlier
// actions of the step ran and the session goes on, a Stepped reply whose
// refusal carries the error.
Completion actionFailed(const StepState& state, const Status& status);
std::optional<Completion> applyRemainingActions(SessionRecord& record, StepState& state);
// endOfStep(), the observations and the reply.
Completion completeStep(SessionRecord& record, const InboundMessage& message, StepState& state);

Completion executeStart(const ReadySessionType& type, SessionId id, ClientId owner,
                        const InboundMessage& message, std::uint64_t maxBenchmarkBytes);
Completion executeStep(SessionRecord& record, const InboundMessage& message);
Completion executeFork(SessionRecord& parent, SessionId childId, const InboundMessage& message);
Completion executeEnd(SessionRecord& record, const InboundMessage& message,
                      std::uint32_t remainingSessions);
Completion executeParameter(SessionRecord& record, const InboundMessage& message);

}  // namespace kiln
