#include <fmt/format.h>

#include "client/client.h"
#include "client/session_codec.h"
#include "common/wire_convert.h"

namespace kiln::client {

Session::Session(Client& client, std::string endpoint, std::uint64_t target, SessionId id,
                 SessionTypeSpaces spaces, SessionHistory history, std::vector<Value> initial)
    : client_(client),
      endpoint_(std::move(endpoint)),
      target_(target),
      id_(id),
      spaces_(std::move(spaces)),
      history_(std::move(history)),
      initial_(std::move(initial)) {}

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

Result<std::uint64_t> Session::sendStep(const std::vector<Value>& actions,
                                        const std::vector<std::uint32_t>& observations) {
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder;
  auto step = channel.begin(builder, timeout(), target_).initRequest().initStep();
  step.setSessionId(id_.value);
  auto wireActions = step.initActions(actions.size());
  for (unsigned i = 0; i < actions.size(); ++i) toWire(actions[i], wireActions[i]);
  auto wanted = step.initObservationSpaces(observations.size());
  for (unsigned i = 0; i < observations.size(); ++i) wanted.set(i, observations[i]);
  KILN_ASSIGN_OR_RETURN(std::uint64_t requestId, channel.send(builder));
  inflight_.emplace(requestId, actions);
  return requestId;
}

Result<StepResult> Session::awaitStep(std::uint64_t requestId) {
  auto sent = inflight_.find(requestId);
  if (sent == inflight_.end()) return invalidArgument("no such step in flight");
  std::vector<Value> actions = std::move(sent->second);
  inflight_.erase(sent);
  Channel& channel = client_.channelTo(endpoint_);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply,
                        channel.await(requestId, std::chrono::steady_clock::now() + timeout()));
  auto stepped = reply.envelope().getReply().getStepped();
  StepResult result;
  KILN_ASSIGN_OR_RETURN(result.observations, decodeValues(stepped.getObservations()));
  result.endOfEpisode = stepped.getEndOfEpisode();
  result.actionHadNoEffect = stepped.getActionHadNoEffect();
  result.actionsApplied = stepped.getActionsApplied();
  if (stepped.getHasNewActionSpace()) {
    KILN_ASSIGN_OR_RETURN(Space space, fromWire(stepped.getNewActionSpace()));
    result.newActionSpace = std::move(space);
  }
  actions.resize(std::min<std::size_t>(actions.size(), result.actionsApplied));
  history_.steps.push_back(std::move(actions));
  return result;
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
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(64);
  channel.begin(builder, timeout(), target_).initRequest().initFork().setSessionId(id_.value);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, channel.call(builder, timeout()));
  SessionId child{reply.envelope().getReply().getForked().getSessionId()};
  client_.leases_->addSession(endpoint_);
  return std::unique_ptr<Session>(
      new Session(client_, endpoint_, target_, child, spaces_, history_, initial_));
}

Status Session::end() {
  if (ended_) return okStatus();
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(64);
  channel.begin(builder, timeout(), target_).initRequest().initEndSession().setSessionId(id_.value);
  auto reply = channel.call(builder, timeout());
  ended_ = true;
  client_.leases_->removeSession(endpoint_);
  return reply.ok() ? okStatus() : reply.status();
}

Result<std::string> Session::setParameter(const std::string& key, const std::string& value) {
  if (ended_) return notFound(fmt::format("session {:x} has ended", id_.value));
  Channel& channel = client_.channelTo(endpoint_);
  capnp::MallocMessageBuilder builder(256);
  auto parameter =
      channel.begin(builder, timeout(), target_).initRequest().initSendSessionParameter();
  parameter.setSessionId(id_.value);
  parameter.setKey(key);
  parameter.setValue(value);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, channel.call(builder, timeout()));
  return std::string(reply.envelope().getReply().getParameterReply().getReply().cStr());
}

}  // namespace kiln::client
