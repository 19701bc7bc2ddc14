#include <fmt/format.h>

#include <algorithm>

#include <kiln/client/client.h>
#include "client/channel.h"
#include "client/lease_keeper.h"
#include "client/session_codec.h"
#include "common/base/wire_convert.h"

namespace kiln::client {

Session::Session(Client& client, std::string endpoint, std::uint64_t target, SessionId id,
                 SessionTypeSpaces spaces, SessionHistory history, std::vector<Value> initial)
    : client_(client),
      endpoint_(std::move(endpoint)),
      target_(target),
      id_(id),
      spaces_(std::move(spaces)),
      history_(std::move(history)),
      initial_(std::move(initial)) {
  // Looked up once: every step may ask for it.
  if (auto fingerprint = findSpace(spaces_.observationSpaces, spaces_.fingerprint);
      spaces_.replayable && fingerprint.ok()) {
    fingerprintIndex_ = static_cast<std::uint32_t>(*fingerprint);
  }
}

Session::~Session() {
  if (ended_) return;
  // Best effort: tell the worker, do not wait. If this is lost, the lease ends it.
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(64);
  channel.begin(builder, timeout(), target_).initRequest().initEndSession().setSessionId(id_.value);
  if (auto sent = channel.send(builder); sent.ok()) channel.abandon(*sent);
  client_.leases_->removeSession(endpoint_);
}

Duration Session::timeout() const {
  return history_.options.timeout.value_or(client_.options_.requestTimeout);
}

Result<std::uint32_t> Session::observationIndex(const std::string& name) const {
  KILN_ASSIGN_OR_RETURN(std::size_t index, findSpace(spaces_.observationSpaces, name));
  return static_cast<std::uint32_t>(index);
}

bool Session::isLoss(const Status& status) {
  // The connection to the worker dropped, or the worker (or nesting host)
  // no longer knows the session: it restarted, or the session was ended
  // behind our back. Timeouts are not losses: the step may just be slow.
  return status.code() == ErrorCode::kDisconnected || status.code() == ErrorCode::kNotFound;
}

Result<std::uint64_t> Session::sendStepRaw(const std::vector<Value>& actions,
                                           const std::vector<std::uint32_t>& observations) {
  Channel& channel = client_.channelTo(endpoint_);
  // Under 1 KiB: the default first segment (8 KiB, zeroed) costs a memset on
  // every step; many actions just add segments.
  capnp::MallocMessageBuilder builder(120);
  auto step = channel.begin(builder, timeout(), target_).initRequest().initStep();
  step.setSessionId(id_.value);
  auto wireActions = step.initActions(actions.size());
  for (unsigned i = 0; i < actions.size(); ++i) toWire(actions[i], wireActions[i]);
  auto wanted = step.initObservationSpaces(observations.size());
  for (unsigned i = 0; i < observations.size(); ++i) wanted.set(i, observations[i]);
  return channel.send(builder);
}

Result<StepResult> Session::awaitStepRaw(std::uint64_t requestId, TimePoint deadline,
                                         Status& refused) {
  Channel& channel = client_.channelTo(endpoint_);
  auto reply = channel.await(requestId, deadline);
  if (!reply.ok()) return client_.timeoutMeansGone(endpoint_, reply.status());
  auto stepped = reply->envelope().getReply().getStepped();
  StepResult result;
  if (stepped.hasRefusal()) {
    refused = fromWire(stepped.getRefusal());
    if (refused.ok()) refused = internalError("the worker sent a refusal without an error");
    result.actionsApplied = stepped.getActionsApplied();
    return result;
  }
  KILN_ASSIGN_OR_RETURN(result.observations, decodeValues(stepped.getObservations()));
  result.endOfEpisode = stepped.getEndOfEpisode();
  result.actionHadNoEffect = stepped.getActionHadNoEffect();
  result.actionsApplied = stepped.getActionsApplied();
  result.actionTime = wireMicros(stepped.getActionMicros());
  result.workerTime = wireMicros(stepped.getWorkerMicros());
  if (stepped.getHasNewActionSpace()) {
    KILN_ASSIGN_OR_RETURN(Space space, fromWire(stepped.getNewActionSpace()));
    result.newActionSpace = std::move(space);
  }
  return result;
}

Result<std::uint64_t> Session::sendStep(const std::vector<Value>& actions,
                                        const std::vector<std::uint32_t>& observations) {
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  InFlight sent{actions, observations, restores_, std::chrono::steady_clock::now()};
  // Every few steps, also fetch the fingerprint a replay must reproduce.
  if (fingerprintIndex_) {
    const std::uint32_t index = *fingerprintIndex_;
    auto asked = std::find(observations.begin(), observations.end(), index);
    std::size_t stepNumber = history_.steps.size() + inflight_.size() + 1;
    unsigned every = client_.options_.fingerprintEvery;
    if (asked != observations.end()) {
      sent.fingerprintSlot = static_cast<int>(asked - observations.begin());
      sent.userAskedFingerprint = true;
    } else if (every != 0 && stepNumber % every == 0) {
      sent.fingerprintSlot = static_cast<int>(sent.observations.size());
      sent.observations.push_back(index);
    }
  }
  auto requestId = sendStepRaw(sent.actions, sent.observations);
  if (!requestId.ok() && isLoss(requestId.status()) && inflight_.empty()) {
    // The worker is known gone before the step could even be queued: restore
    // now (no earlier step is in flight, so the order of steps is kept).
    KILN_RETURN_IF_ERROR(restore(requestId.status()));
    sent.epoch = restores_;
    sent.restored = true;
    sent.sentAt = std::chrono::steady_clock::now();
    requestId = sendStepRaw(sent.actions, sent.observations);
  }
  KILN_RETURN_IF_ERROR(requestId.status());
  inflight_.emplace(*requestId, std::move(sent));
  return *requestId;
}

Result<StepResult> Session::finishStep(InFlight sent, StepResult result, const Status& refused) {
  if (sent.fingerprintSlot >= 0 &&
      static_cast<std::size_t>(sent.fingerprintSlot) < result.observations.size()) {
    std::size_t slot = static_cast<std::size_t>(sent.fingerprintSlot);
    history_.fingerprint =
        SessionHistory::Fingerprint{history_.steps.size() + 1, result.observations[slot]};
    if (!sent.userAskedFingerprint) result.observations.erase(result.observations.begin() + slot);
  }
  sent.actions.resize(std::min<std::size_t>(sent.actions.size(), result.actionsApplied));
  history_.steps.push_back(std::move(sent.actions));
  if (!refused.ok()) return refused;
  for (std::uint32_t index : sent.observations) {
    if (index < spaces_.observationSpaces.size() &&
        spaces_.observationSpaces[index].sinceLastObserved) {
      history_.lastObservedAfter[index] = history_.steps.size();
    }
  }
  result.restored = sent.restored;
  return result;
}

Result<StepResult> Session::awaitStep(std::uint64_t requestId) {
  auto found = inflight_.find(requestId);
  if (found == inflight_.end()) return invalidArgument("no such step in flight");
  InFlight sent = std::move(found->second);
  inflight_.erase(found);
  std::optional<std::uint64_t> pending;
  // From the send: steps pipelined to one silent worker time out together,
  // not one full timeout after another.
  TimePoint deadline = sent.sentAt + timeout();
  if (sent.epoch == restores_) {
    pending = requestId;
  } else {
    // Sent to the worker that was lost before the restore: abandon it there.
    client_.abandon(lostEndpoint_, requestId);
  }
  // A step whose worker is lost is sent again to the rebuilt session, which
  // has not seen it yet; if that one's worker is lost too before it answers
  // (a neighbour's crash took down the worker the restore found), it is
  // rebuilt and sent again. restore() bounds each rebuild by its deadline;
  // this bounds how many rebuilds one step may cost.
  constexpr int kMostRestoresPerStep = 8;
  for (int restoresHere = 0;; ++restoresHere) {
    if (!pending) {
      sent.restored = true;
      auto again = sendStepRaw(sent.actions, sent.observations);
      if (again.ok()) pending = *again;
      deadline = std::chrono::steady_clock::now() + timeout();
      if (!again.ok() && !isLoss(again.status())) return again.status();
    }
    Result<StepResult> result = disconnected("the worker was lost before the step was sent");
    Status refused;
    if (pending) result = awaitStepRaw(*pending, deadline, refused);
    if (result.ok()) return finishStep(std::move(sent), std::move(result).value(), refused);
    if (!isLoss(result.status()) || restoresHere == kMostRestoresPerStep) return result.status();
    KILN_RETURN_IF_ERROR(restore(result.status()));
    pending.reset();
  }
}

bool Session::stepReady(std::uint64_t requestId) {
  auto found = inflight_.find(requestId);
  if (found == inflight_.end() || found->second.epoch != restores_) return true;
  if (std::chrono::steady_clock::now() >= found->second.sentAt + timeout()) return true;
  return client_.channelTo(endpoint_).replyReady(requestId);
}

TimePoint Session::stepDeadline(std::uint64_t requestId) const {
  auto found = inflight_.find(requestId);
  if (found == inflight_.end()) return TimePoint::max();
  return found->second.sentAt + timeout();
}

Result<StepResult> Session::step(const std::vector<Value>& actions,
                                 const std::vector<std::uint32_t>& observations) {
  KILN_ASSIGN_OR_RETURN(std::uint64_t requestId, sendStep(actions, observations));
  return awaitStep(requestId);
}

Result<StepResult> Session::step(const std::vector<Value>& actions,
                                 const std::vector<std::string>& observations) {
  KILN_ASSIGN_OR_RETURN(auto indices, observationIndices(spaces_, observations));
  return step(actions, indices);
}

Result<std::unique_ptr<Session>> Session::fork() {
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  for (int attempt = 0;; ++attempt) {
    Channel& channel = client_.channelTo(endpoint_);
    capnp::MallocMessageBuilder builder(64);
    channel.begin(builder, timeout(), target_).initRequest().initFork().setSessionId(id_.value);
    auto reply = channel.call(builder, timeout());
    if (reply.ok()) {
      SessionId child{reply->envelope().getReply().getForked().getSessionId()};
      client_.leases_->addSession(endpoint_);
      std::unique_ptr<Session> forked(
          new Session(client_, endpoint_, target_, child, spaces_, history_, initial_));
      forked->workerId_ = workerId_;
      return forked;
    }
    Status failed = client_.timeoutMeansGone(endpoint_, reply.status());
    if (attempt > 0 || !isLoss(failed)) return failed;
    KILN_RETURN_IF_ERROR(restore(failed));
  }
}

Result<std::string> Session::compilerVersion() {
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(64);
  channel.begin(builder, timeout(), target_).initRequest().initGetVersion();
  auto reply = channel.call(builder, timeout());
  if (!reply.ok()) return client_.timeoutMeansGone(endpoint_, reply.status());
  // "llvm: LLVM 19.1.7 (pass table ...); noop: noop 1": this session's type.
  const std::string all = reply->envelope().getReply().getVersion().getCompilerVersion().cStr();
  const std::string prefix = history_.options.sessionType + ": ";
  for (std::size_t at = 0; at < all.size();) {
    std::size_t end = all.find("; ", at);
    if (end == std::string::npos) end = all.size();
    if (all.compare(at, prefix.size(), prefix) == 0) {
      return all.substr(at + prefix.size(), end - at - prefix.size());
    }
    at = end + 2;
  }
  return all;
}

Status Session::end() {
  if (ended_) return okStatus();
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(64);
  channel.begin(builder, timeout(), target_).initRequest().initEndSession().setSessionId(id_.value);
  auto reply = channel.call(builder, timeout());
  ended_ = true;
  client_.leases_->removeSession(endpoint_);
  if (reply.ok()) return okStatus();
  // A session whose worker is gone is over all the same.
  Status failed = client_.timeoutMeansGone(endpoint_, reply.status());
  return isLoss(failed) ? okStatus() : failed;
}

Result<std::string> Session::setParameter(const std::string& key, const std::string& value) {
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  for (int attempt = 0;; ++attempt) {
    Channel& channel = client_.channelTo(endpoint_);
    capnp::MallocMessageBuilder builder(256);
    auto parameter =
        channel.begin(builder, timeout(), target_).initRequest().initSendSessionParameter();
    parameter.setSessionId(id_.value);
    parameter.setKey(key);
    parameter.setValue(value);
    auto reply = channel.call(builder, timeout());
    if (reply.ok()) {
      history_.parameters.push_back({history_.steps.size(), key, value});
      return std::string(reply->envelope().getReply().getParameterReply().getReply().cStr());
    }
    Status failed = client_.timeoutMeansGone(endpoint_, reply.status());
    if (attempt > 0 || !isLoss(failed)) return failed;
    KILN_RETURN_IF_ERROR(restore(failed));
  }
}

}  // namespace kiln::client
