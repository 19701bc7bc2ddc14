#include "worker/split_step.h"

namespace kiln {

SplitStep::Phase SplitStep::fail(Completion reply) {
  failed_ = std::move(reply);
  return Phase::kReady;
}

SplitStep::Phase SplitStep::start() {
  try {
    state_.requestId = message_.envelope().getRequestId();
    if (auto rejected = prepareStep(record_, message_, state_)) return fail(std::move(*rejected));
    return beginActions();
  } catch (const kj::Exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  } catch (const std::exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  }
}

std::optional<SplitStep::Phase> SplitStep::progressed(Result<ActionProgress> progress) {
  if (!progress.ok()) {
    return fail(actionFailed(state_, progress.status()));
  }
  switch (*progress) {
    case ActionProgress::kWaiting:
      return Phase::kWaiting;
    case ActionProgress::kOnPool:
      return Phase::kOnPool;
    case ActionProgress::kDone:
      break;
  }
  if (recordAction(record_, state_, current_)) return Phase::kReady;
  return std::nullopt;  // begin the next action
}

SplitStep::Phase SplitStep::beginActions() {
  while (state_.nextAction < state_.actions.size()) {
    current_ = ActionOutcome{};
    auto progress = split_.beginAction(state_.actions[state_.nextAction], current_, wait_);
    if (auto phase = progressed(std::move(progress))) return *phase;
  }
  return Phase::kReady;  // a step without actions only observes
}

SplitStep::Phase SplitStep::resume() {
  try {
    if (auto phase = progressed(split_.continueAction(current_, wait_))) return *phase;
    return beginActions();
  } catch (const kj::Exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  } catch (const std::exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  }
}

SplitStep::Phase SplitStep::runBlocking() {
  try {
    Status finished = split_.finishAction(current_);
    if (!finished.ok()) return fail(actionFailed(state_, finished));
    recordAction(record_, state_, current_);
    // Later actions of the same step stay here: the thread is already taken.
    if (auto failed = applyRemainingActions(record_, state_)) return fail(std::move(*failed));
    return Phase::kReady;
  } catch (const kj::Exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  } catch (const std::exception& e) {
    return fail(guardedFailure(state_.requestId, e));
  }
}

bool SplitStep::quickToComplete() const {
  if (failed_) return true;
  for (std::uint32_t index : message_.envelope().getRequest().getStep().getObservationSpaces()) {
    if (!split_.quickObservation(index)) return false;
  }
  return true;
}

Completion SplitStep::complete() {
  if (failed_) return std::move(*failed_);
  return guarded(state_.requestId, [&] { return completeStep(record_, message_, state_); });
}

}  // namespace kiln
