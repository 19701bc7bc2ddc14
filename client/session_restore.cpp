// Rebuilding a lost session on another worker (see the Session comment in
// client.h): place, start from the same benchmark, replay parameters and
// actions in their original order (pipelined: a worker runs one session's
// requests in order), check the fingerprint, then adopt the new session.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include <kiln/client/client.h>
#include "client/channel.h"
#include "client/lease_keeper.h"
#include "client/session_codec.h"
#include "common/base/wire_convert.h"

namespace kiln::client {

Status Session::replayOn(Session& fresh, bool& diverged) {
  diverged = false;
  Channel& channel = client_.channelTo(fresh.endpoint_);
  const auto& parameters = history_.parameters;
  const auto& fingerprint = history_.fingerprint;
  std::vector<std::uint64_t> requests;
  // On any failure, forget the replies not yet read: a channel that still
  // expects replies is never dropped, even once its worker is gone.
  std::size_t next = 0;
  struct AbandonRest {
    Channel& channel;
    const std::vector<std::uint64_t>& requests;
    const std::size_t& next;
    ~AbandonRest() {
      for (std::size_t i = next; i < requests.size(); ++i) channel.abandon(requests[i]);
    }
  } abandonRest{channel, requests, next};
  std::optional<std::uint64_t> fingerprintRequest;
  std::size_t nextParameter = 0;
  auto sendParameters = [&](std::size_t afterSteps) -> Status {
    for (; nextParameter < parameters.size() && parameters[nextParameter].afterSteps == afterSteps;
         ++nextParameter) {
      capnp::MallocMessageBuilder builder(256);
      auto request =
          channel.begin(builder, timeout(), fresh.target_).initRequest().initSendSessionParameter();
      request.setSessionId(fresh.id_.value);
      request.setKey(parameters[nextParameter].key);
      request.setValue(parameters[nextParameter].value);
      KILN_ASSIGN_OR_RETURN(std::uint64_t id, channel.send(builder));
      requests.push_back(id);
    }
    return okStatus();
  };
  if (fingerprint && !fingerprintIndex_) {
    return internalError(
        fmt::format("the replay has no fingerprint space '{}'", spaces_.fingerprint));
  }
  KILN_RETURN_IF_ERROR(sendParameters(0));
  for (std::size_t i = 0; i < history_.steps.size(); ++i) {
    const bool check = fingerprint && fingerprint->afterSteps == i + 1;
    KILN_ASSIGN_OR_RETURN(std::uint64_t id,
                          fresh.sendStepRaw(history_.steps[i], replayObservations(i + 1, check)));
    if (check) fingerprintRequest = id;
    requests.push_back(id);
    KILN_RETURN_IF_ERROR(sendParameters(i + 1));
  }
  auto deadline = std::chrono::steady_clock::now() + timeout();
  for (; next < requests.size(); ++next) {
    const std::uint64_t id = requests[next];
    auto reply = channel.await(id, deadline);
    if (!reply.ok()) return client_.timeoutMeansGone(fresh.endpoint_, reply.status());
    auto stepped = reply->envelope().getReply().getStepped();
    if (stepped.hasRefusal()) {
      // Every action of the history ran before: refused now, it diverged.
      diverged = true;
      return internalError(fmt::format("the replayed session diverged: step {} was refused: {}",
                                       next + 1, fromWire(stepped.getRefusal()).message()));
    }
    if (id != fingerprintRequest) continue;
    KILN_ASSIGN_OR_RETURN(auto values, decodeValues(stepped.getObservations()));
    if (values.empty() || !(values[0] == fingerprint->value)) {
      diverged = true;
      return internalError(fmt::format(
          "the replayed session diverged: {} after {} steps is {}, was {} (is the session type "
          "really deterministic?)",
          spaces_.fingerprint, fingerprint->afterSteps,
          values.empty() ? std::string("missing") : values[0].describe(),
          fingerprint->value.describe()));
    }
  }
  return okStatus();
}

std::vector<std::uint32_t> Session::replayObservations(std::size_t step,
                                                       bool withFingerprint) const {
  std::vector<std::uint32_t> wanted;
  if (withFingerprint) wanted.push_back(*fingerprintIndex_);
  // Their values are dropped: computing them only sets where each reward
  // measures its next drop from, as the lost session's last reward did.
  for (const auto& [space, afterSteps] : history_.lastObservedAfter) {
    if (afterSteps == step) wanted.push_back(space);
  }
  return wanted;
}

Status Session::restore(const Status& why) {
  const std::string& type = history_.options.sessionType;
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  if (!spaces_.replayable || !client_.options_.restoreLostSessions) {
    return disconnected(fmt::format("session lost: {} (session type '{}' {})", why.message(), type,
                                    spaces_.replayable
                                        ? "is not restored: restoreLostSessions is off"
                                        : "cannot be replayed elsewhere"));
  }
  // Avoid the endpoint only if its process is gone. A live host that says
  // it lost the session (an isolating nesting host whose experiment's child
  // process crashed and was restarted) can host the restored session.
  if (client_.channelTo(endpoint_).peerLost()) client_.noteLost(endpoint_, workerId_);
  Status last = why;
  // Until one request timeout from now (so at least the failed request's
  // own deadline), "no ready worker yet" is waited out (an experiment's
  // process being restarted on its host, workers still registering), and a
  // restore whose new worker is lost too (killed during the replay, or
  // dead but still listed by the coordinator) is tried again elsewhere,
  // avoiding every worker seen dead. Each loss adds one to avoid, so the
  // attempts end; the cap only bounds a cluster whose workers all keep
  // dying and being replaced.
  const auto waitUntil = std::chrono::steady_clock::now() + timeout();
  // A few LLVM passes give another result, rarely, in a process with another
  // history (seen for dfa-jump-threading in one process, never from opt-19
  // run alone): a replay that diverged is tried once more, on a fresh
  // session. A session type that is simply not deterministic still fails.
  int divergenceRetries = 1;
  constexpr int kMaxAttempts = 16;
  for (int attempt = 0; attempt < kMaxAttempts && std::chrono::steady_clock::now() < waitUntil;) {
    // A full cluster, and a coordinator that is restarting (gone, silent,
    // or not yet told by the workers of this type that they are back), are
    // waited out alike.
    const auto mayComeBack = [](ErrorCode code) {
      return code == ErrorCode::kOverloaded || code == ErrorCode::kDisconnected ||
             code == ErrorCode::kTimeout || code == ErrorCode::kNotFound;
    };
    auto placed = client_.placeWaiting(type, history_.options.benchmark, waitUntil, mayComeBack);
    if (!placed.ok()) {
      last = placed.status();
      break;
    }
    ++attempt;
    auto fresh = client_.startOn(placed->endpoint, placed->target, history_.options, spaces_);
    if (fresh.ok()) (*fresh)->workerId_ = placed->workerId;
    bool diverged = false;
    Status replayed = fresh.ok() ? replayOn(**fresh, diverged) : fresh.status();
    if (!replayed.ok()) {
      last = replayed;
      if (diverged && divergenceRetries-- > 0) {
        (void)(*fresh)->end();
        continue;
      }
      // A fresh session on a dead worker needs no EndSession, nor one its
      // worker ended after a compile error; a diverged one does.
      bool refused = replayed.code() == ErrorCode::kCompileError;
      if (fresh.ok() && (isLoss(replayed) || refused)) {
        (*fresh)->ended_ = true;
        client_.leases_->removeSession(placed->endpoint);  // which its destructor now skips
      }
      if (refused) {
        // A step of the history that the compiler refuses (or crashes on)
        // when replayed: this episode is over, as if it had failed there
        // first. Reported as what it is, and final: replaying it again on
        // yet another worker would only fail (or crash) again.
        ended_ = true;
        endedInRestore_ = true;
        client_.leases_->removeSession(endpoint_);
        return compileError(fmt::format(
            "session {:x} could not be restored after {}: replaying its history failed: {}",
            id_.value, why.message(), replayed.message()));
      }
      if (!isLoss(replayed)) break;  // e.g. divergence: replaying again would not help
      client_.noteLost(placed->endpoint, placed->workerId);
      continue;
    }
    // Adopt the new session; its lease replaces ours on the lost worker.
    Session& adopted = **fresh;
    client_.leases_->removeSession(endpoint_);
    lostEndpoint_ = endpoint_;
    endpoint_ = adopted.endpoint_;
    target_ = adopted.target_;
    workerId_ = adopted.workerId_;
    id_ = adopted.id_;
    adopted.ended_ = true;  // nothing for its destructor to end: it is us now
    ++restores_;
    ++client_.restored_;
    return okStatus();
  }
  return disconnected(fmt::format("session lost and not restored: {} (last attempt: {})",
                                  why.message(), last.toString()));
}

}  // namespace kiln::client
