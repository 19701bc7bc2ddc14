#include "worker/session_ops.h"

#include <fmt/format.h>

#include "common/base/wire_convert.h"

namespace kiln {

namespace {

std::uint64_t micros(std::chrono::steady_clock::duration duration) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(
      0, std::chrono::duration_cast<std::chrono::microseconds>(duration).count()));
}

std::uint64_t microsSince(std::chrono::steady_clock::time_point began) {
  return micros(std::chrono::steady_clock::now() - began);
}

Status checkObservationIndices(const ReadySessionType& type,
                               capnp::List<std::uint32_t>::Reader indices) {
  for (std::uint32_t index : indices) {
    if (index >= type.info.observationSpaces.size()) {
      return invalidArgument(
          fmt::format("observation space {} does not exist: session type '{}' has {} (0 to {})",
                      index, type.info.name, type.info.observationSpaces.size(),
                      type.info.observationSpaces.size() - 1));
    }
  }
  return okStatus();
}

Status observe(CompilationSession& session, capnp::List<std::uint32_t>::Reader indices,
               capnp::List<wire::Value>::Builder out) {
  for (unsigned i = 0; i < indices.size(); ++i) {
    Value observation;
    KILN_RETURN_IF_ERROR(session.computeObservation(indices[i], observation));
    toWire(observation, out[i]);
  }
  return okStatus();
}

// Takes the client's inline bytes (cached under the client's own key), or
// its own earlier bytes, or what the worker itself resolved for the URI
// (cache, else the session type's context, whose answer is cached for all).
Result<Benchmark> obtainBenchmark(const ReadySessionType& type, wire::Benchmark::Reader wire,
                                  ClientId owner, std::uint64_t maxBytes, bool& cached) {
  std::string uri = wire.getUri().cStr();
  BenchmarkCache& cache = type.context->benchmarkCache();
  cached = false;
  if (wire.hasProgram() && wire.getProgram().size() > 0) {
    auto bytes = wire.getProgram();
    if (bytes.size() > maxBytes) {
      return invalidArgument(fmt::format("benchmark '{}' is {} bytes, over the limit of {} bytes",
                                         uri, bytes.size(), maxBytes));
    }
    if (uri.empty()) return invalidArgument("an inline benchmark needs a URI to be cached under");
    auto program = std::make_shared<const std::string>(reinterpret_cast<const char*>(bytes.begin()),
                                                       bytes.size());
    cache.insert(privateCacheKey(owner, uri), program);
    return Benchmark{uri, std::move(program)};
  }
  // contains() first: a lookup of the private key counts a miss in the
  // cache's counters, which should see one lookup per start.
  const std::string own = privateCacheKey(owner, uri);
  if (auto program = cache.get(cache.contains(own) ? own : uri)) {
    cached = true;
    return Benchmark{uri, std::move(program)};
  }
  KILN_ASSIGN_OR_RETURN(Benchmark benchmark, type.context->resolveBenchmark(uri));
  if (benchmark.program) cache.insert(uri, benchmark.program);
  return benchmark;
}

// A session type answers an unknown key with not found (kit's contract);
// on the wire, a session request's "not found" says the session is gone, and
// a client would replay it under a new id and leave this one orphaned
// (issue 48). The key is the caller's mistake: invalid argument.
Status asSessionAnswer(const Status& status) {
  if (status.code() != ErrorCode::kNotFound) return status;
  return invalidArgument(status.message() + "; the session is unchanged");
}

}  // namespace

Completion errorCompletion(std::uint64_t requestId, const Status& status, bool sessionOver) {
  Completion completion;
  completion.reply = encodeErrorReply(requestId, status);
  completion.error = status.code();
  completion.sessionOver = sessionOver;
  return completion;
}

bool endsSession(const Status& status) {
  return status.code() == ErrorCode::kCompileError || status.code() == ErrorCode::kInternal;
}

Completion guardedFailure(std::uint64_t requestId, const kj::Exception& e) {
  return errorCompletion(
      requestId, invalidArgument(fmt::format("malformed request: {}", e.getDescription().cStr())),
      false);
}

Completion guardedFailure(std::uint64_t requestId, const std::exception& e) {
  return errorCompletion(requestId, internalError(fmt::format("session failed: {}", e.what())),
                         true);
}

Completion executeStart(const ReadySessionType& type, SessionId id, ClientId owner,
                        const InboundMessage& message, std::uint64_t maxBenchmarkBytes) {
  const auto began = std::chrono::steady_clock::now();
  auto envelope = message.envelope();
  std::uint64_t requestId = envelope.getRequestId();
  return guarded(requestId, [&]() -> Completion {
    auto request = envelope.getRequest().getStartSession();
    std::uint32_t actionIndex = request.getActionSpace();
    if (actionIndex >= type.info.actionSpaces.size()) {
      return errorCompletion(
          requestId,
          invalidArgument(fmt::format("action space {} does not exist: '{}' has {}", actionIndex,
                                      type.info.name, type.info.actionSpaces.size())),
          false);
    }
    Status indices = checkObservationIndices(type, request.getObservationSpaces());
    if (!indices.ok()) return errorCompletion(requestId, indices, false);
    bool cached = false;
    auto benchmark =
        obtainBenchmark(type, request.getBenchmark(), owner, maxBenchmarkBytes, cached);
    if (!benchmark.ok()) return errorCompletion(requestId, benchmark.status(), false);

    auto record = std::make_unique<SessionRecord>();
    record->id = id;
    record->owner = owner;
    record->experiment = envelope.getExperiment().cStr();
    record->type = &type;
    record->actionSpace = type.info.actionSpaces[actionIndex];
    record->session = type.create();
    record->program = benchmark->program;
    record->programBytes = benchmark->sizeBytes();
    Status init = record->session->init(actionIndex, *benchmark);
    if (!init.ok()) return errorCompletion(requestId, init, false);

    capnp::MallocMessageBuilder builder;
    auto started = initEnvelope(builder, requestId).initReply().initSessionStarted();
    started.setSessionId(id.value);
    started.setBenchmarkCached(cached);
    auto observationIndices = request.getObservationSpaces();
    Status observed = observe(*record->session, observationIndices,
                              started.initObservations(observationIndices.size()));
    if (!observed.ok()) return errorCompletion(requestId, observed, false);
    started.setWorkerMicros(microsSince(began));
    Completion completion;
    completion.reply = encodeFrame(builder);
    completion.created = std::move(record);
    return completion;
  });
}

std::optional<Completion> prepareStep(SessionRecord& record, const InboundMessage& message,
                                      StepState& state) {
  auto envelope = message.envelope();
  state.requestId = envelope.getRequestId();
  auto request = envelope.getRequest().getStep();
  Status indices = checkObservationIndices(*record.type, request.getObservationSpaces());
  if (!indices.ok()) return errorCompletion(state.requestId, indices, false);
  // Decode and check every action before applying any.
  state.actions.reserve(request.getActions().size());
  for (auto wireAction : request.getActions()) {
    auto action = fromWire(wireAction);
    if (!action.ok()) return errorCompletion(state.requestId, action.status(), false);
    Status inSpace = record.actionSpace.check(*action);
    if (!inSpace.ok()) return errorCompletion(state.requestId, inSpace, false);
    state.actions.push_back(std::move(action).value());
  }
  state.total.actionHadNoEffect = true;
  state.actionsBegan = std::chrono::steady_clock::now();
  return std::nullopt;
}

bool recordAction(SessionRecord& record, StepState& state, ActionOutcome& outcome) {
  ++state.applied;
  ++state.nextAction;
  state.total.actionHadNoEffect = state.total.actionHadNoEffect && outcome.actionHadNoEffect;
  if (outcome.newActionSpace) {
    state.total.newActionSpace = std::move(outcome.newActionSpace);
    record.actionSpace = *state.total.newActionSpace;
  }
  if (outcome.endOfEpisode) state.total.endOfEpisode = true;
  if (!state.total.endOfEpisode && state.nextAction < state.actions.size()) return false;
  state.actionTime = std::chrono::steady_clock::now() - state.actionsBegan;
  return true;
}

Completion completeStep(SessionRecord& record, const InboundMessage& message, StepState& state) {
  const auto observing = std::chrono::steady_clock::now();
  Status endOfStep = record.session->endOfStep(state.total);
  if (!endOfStep.ok()) {
    return errorCompletion(state.requestId, endOfStep, endsSession(endOfStep));
  }
  auto observationIndices = message.envelope().getRequest().getStep().getObservationSpaces();
  // A first segment under 1 KiB: capnp's default (8 KiB, zeroed) costs a
  // memset and evicts the compiler's cache lines on every step of a fast
  // session (MLGO decisions); a large reply just adds segments.
  capnp::MallocMessageBuilder builder(120);
  auto stepped = initEnvelope(builder, state.requestId).initReply().initStepped();
  Status observed = observe(*record.session, observationIndices,
                            stepped.initObservations(observationIndices.size()));
  if (!observed.ok()) return errorCompletion(state.requestId, observed, endsSession(observed));
  stepped.setEndOfEpisode(state.total.endOfEpisode);
  stepped.setActionHadNoEffect(state.total.actionHadNoEffect);
  stepped.setActionsApplied(state.applied);
  stepped.setActionMicros(micros(state.actionTime));
  // The actions' time plus the observations': a step split over several
  // tasks waited in the queue between its actions, which is not work.
  stepped.setWorkerMicros(micros(state.actionTime) + microsSince(observing));
  if (state.total.newActionSpace) {
    stepped.setHasNewActionSpace(true);
    toWire(*state.total.newActionSpace, stepped.initNewActionSpace());
  }
  Completion completion;
  completion.reply = encodeFrame(builder);
  completion.steps = state.applied;
  return completion;
}

Completion actionFailed(const StepState& state, const Status& status) {
  if (state.applied == 0 || endsSession(status)) {
    return errorCompletion(state.requestId, status, endsSession(status));
  }
  // Earlier actions of the step ran and stay applied: the reply says how
  // many, so that the client's history (what a restore or a replay
  // repeats) holds them.
  capnp::MallocMessageBuilder builder(256);
  auto stepped = initEnvelope(builder, state.requestId).initReply().initStepped();
  stepped.setActionsApplied(state.applied);
  toWire(status, stepped.initRefusal());
  Completion completion;
  completion.reply = encodeFrame(builder);
  completion.error = status.code();
  completion.steps = state.applied;
  return completion;
}

std::optional<Completion> applyRemainingActions(SessionRecord& record, StepState& state) {
  while (state.nextAction < state.actions.size() && !state.total.endOfEpisode) {
    ActionOutcome outcome;
    Status status = record.session->applyAction(state.actions[state.nextAction], outcome);
    if (!status.ok()) return actionFailed(state, status);
    recordAction(record, state, outcome);
  }
  return std::nullopt;
}

Completion executeStep(SessionRecord& record, const InboundMessage& message) {
  std::uint64_t requestId = message.envelope().getRequestId();
  return guarded(requestId, [&]() -> Completion {
    StepState state;
    if (auto rejected = prepareStep(record, message, state)) return std::move(*rejected);
    if (auto failed = applyRemainingActions(record, state)) return std::move(*failed);
    return completeStep(record, message, state);
  });
}

Completion executeFork(SessionRecord& parent, SessionId childId, const InboundMessage& message) {
  std::uint64_t requestId = message.envelope().getRequestId();
  return guarded(requestId, [&]() -> Completion {
    auto child = std::make_unique<SessionRecord>();
    child->id = childId;
    child->owner = parent.owner;
    child->experiment = parent.experiment;
    child->type = parent.type;
    child->actionSpace = parent.actionSpace;
    child->program = parent.program;
    child->programBytes = parent.programBytes;
    child->session = parent.type->create();
    Status init = child->session->initAsFork(*parent.session);
    if (!init.ok()) return errorCompletion(requestId, init, false);
    capnp::MallocMessageBuilder builder(128);
    initEnvelope(builder, requestId).initReply().initForked().setSessionId(childId.value);
    Completion completion;
    completion.reply = encodeFrame(builder);
    completion.created = std::move(child);
    return completion;
  });
}

Completion executeEnd(SessionRecord& record, const InboundMessage& message,
                      std::uint32_t remainingSessions) {
  std::uint64_t requestId = message.envelope().getRequestId();
  // Destroying a session may be slow (a large module, a child compiler), so it
  // happens here on the pool rather than on the loop.
  record.session.reset();
  capnp::MallocMessageBuilder builder(128);
  initEnvelope(builder, requestId).initReply().initEnded().setRemainingSessions(remainingSessions);
  Completion completion;
  completion.reply = encodeFrame(builder);
  completion.sessionOver = true;
  return completion;
}

Completion executeParameter(SessionRecord& record, const InboundMessage& message) {
  auto envelope = message.envelope();
  std::uint64_t requestId = envelope.getRequestId();
  return guarded(requestId, [&]() -> Completion {
    auto request = envelope.getRequest().getSendSessionParameter();
    auto answer =
        record.session->handleParameter(request.getKey().cStr(), request.getValue().cStr());
    if (!answer.ok()) return errorCompletion(requestId, asSessionAnswer(answer.status()), false);
    capnp::MallocMessageBuilder builder(256);
    initEnvelope(builder, requestId).initReply().initParameterReply().setReply(*answer);
    Completion completion;
    completion.reply = encodeFrame(builder);
    return completion;
  });
}

}  // namespace kiln
