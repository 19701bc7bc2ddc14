#include "worker/session_host.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/base/wire_convert.h"
#include "common/metrics/log_fields.h"
#include "common/security/identity.h"
#include "worker/session_ops.h"
#include "worker/split_step.h"

namespace kiln {

struct SessionHost::Ticket {
  std::string routingId;
  std::uint64_t requestId = 0;
  TimePoint deadline;
  SessionRecord* record = nullptr;  // the strand it runs on; null for StartSession
  bool answered = false;            // a timeout was already sent
  bool creates = false;             // a start or fork: counts against maxSessions meanwhile
  ClientId creator;                 // whose per-client count it reserved
  SessionFootprint footprint;       // what it reserved
  bool shortened = false;           // it asked for more than longestDeadline()
};

struct SessionHost::Split {
  SplitStep step;
  std::chrono::steady_clock::time_point started;
};

namespace {

SessionFootprint footprintOf(const SessionRecord& record) {
  return record.type != nullptr ? record.type->info.footprint : SessionFootprint{};
}

}  // namespace

Duration longestDeadline(const HostLimits& limits) {
  return limits.maxDeadline > Duration::zero() ? limits.maxDeadline : limits.defaultDeadline;
}

Duration requestTimeout(const HostLimits& limits, std::uint32_t timeoutMs) {
  const Duration asked =
      timeoutMs != 0 ? Duration(milliseconds(timeoutMs)) : limits.defaultDeadline;
  return std::min(asked, longestDeadline(limits));
}

SessionHost::SessionHost(const SessionTypeRegistry& types, BenchmarkCache& cache, HostLimits limits,
                         const Clock& clock, Executor& executor, ReplySink& replies,
                         Mailbox<Completion>& completions, Logger logger, HostScope scope)
    : types_(types),
      cache_(cache),
      limits_(limits),
      clock_(clock),
      executor_(executor),
      replies_(replies),
      completions_(completions),
      logger_(std::move(logger)),
      scope_(std::move(scope)),
      quotas_(QuotaLimits{limits.maxSessionsPerClient, limits.maxCompilersPerClient,
                          limits.maxCompilers, limits.maxBenchmarkBytesPerClient}) {}

SessionHost::~SessionHost() { clear(); }

template <class Work>
void SessionHost::post(const std::string& key, std::uint64_t ticket, Work work) {
  executor_.post(key, [this, ticket, work = std::move(work)]() mutable {
    auto started = std::chrono::steady_clock::now();
    Completion completion = work();
    completion.ran = std::chrono::steady_clock::now() - started;
    completion.target = scope_.target;
    completion.ticket = ticket;
    completions_.push(std::move(completion));
  });
}

const ReadySessionType* SessionHost::findType(const std::string& name) const {
  if (!scope_.sessionTypes.empty() &&
      std::find(scope_.sessionTypes.begin(), scope_.sessionTypes.end(), name) ==
          scope_.sessionTypes.end()) {
    return nullptr;
  }
  return types_.find(name);
}

std::vector<std::string> SessionHost::typeNames() const {
  if (scope_.sessionTypes.empty()) return types_.names();
  std::vector<std::string> names;
  for (const std::string& name : scope_.sessionTypes) {
    if (types_.find(name) != nullptr) names.push_back(name);
  }
  return names;
}

std::string SessionHost::schedulingKey(const std::string& requested) const {
  return scope_.experiment.empty() ? requested : scope_.experiment;
}

void SessionHost::reply(const std::string& routingId, std::uint64_t requestId,
                        const Status& status) {
  if (limits_.observer != nullptr) limits_.observer->onError(status.code());
  replies_.send(routingId, encodeErrorReply(requestId, status));
}

void SessionHost::handle(const std::string& routingId, InboundMessage message) {
  auto envelope = message.envelope();
  std::uint64_t requestId = 0;
  try {
    requestId = envelope.getRequestId();
    Status version = checkProtocolVersion(envelope);
    if (!version.ok()) return reply(routingId, requestId, version);
    if (!envelope.isRequest()) {
      return reply(routingId, requestId, invalidArgument("a worker accepts only requests"));
    }
    dispatch(routingId, std::move(message));
  } catch (const kj::Exception& e) {
    reply(routingId, requestId,
          invalidArgument(fmt::format("malformed request: {}", e.getDescription().cStr())));
  }
}

void SessionHost::dispatch(const std::string& routingId, InboundMessage message) {
  auto envelope = message.envelope();
  std::uint64_t requestId = envelope.getRequestId();
  ClientId client = clientIds_.of(envelope);
  if (client.valid()) leases_[client] = clock_.now();
  auto request = envelope.getRequest();
  switch (request.which()) {
    case wire::Request::GET_VERSION:
      return replyVersion(routingId, requestId);
    case wire::Request::GET_SPACES:
      return replySpaces(routingId, requestId, request.getGetSpaces().getSessionType().cStr());
    case wire::Request::START_SESSION:
      return startSession(routingId, std::move(message), client);
    case wire::Request::STEP:
    case wire::Request::FORK:
    case wire::Request::END_SESSION:
      return handleSessionRequest(routingId, std::move(message), client);
    case wire::Request::SEND_SESSION_PARAMETER: {
      auto parameter = request.getSendSessionParameter();
      if (parameter.getSessionId() != 0) {
        return handleSessionRequest(routingId, std::move(message), client);
      }
      return handleWorkerParameter(routingId, requestId, parameter.getKey().cStr(),
                                   parameter.getValue().cStr());
    }
    case wire::Request::ADD_BENCHMARK:
      return addBenchmarks(routingId, message, client);
    case wire::Request::KEEP_ALIVE: {
      capnp::MallocMessageBuilder builder(64);
      initEnvelope(builder, requestId).initReply().setKeptAlive();
      return replies_.send(routingId, encodeFrame(builder));
    }
    default:
      return reply(routingId, requestId,
                   invalidArgument("this is a worker: send cluster requests to the coordinator"));
  }
}

std::uint64_t SessionHost::openTicket(const std::string& routingId, std::uint64_t requestId,
                                      std::uint32_t timeoutMs, SessionRecord* record) {
  auto ticket = std::make_unique<Ticket>();
  ticket->routingId = routingId;
  ticket->requestId = requestId;
  const Duration timeout = requestTimeout(limits_, timeoutMs);
  ticket->deadline = clock_.now() + timeout;
  ticket->shortened = timeoutMs != 0 && Duration(milliseconds(timeoutMs)) > timeout;
  ticket->record = record;
  std::uint64_t id = nextTicket_++;
  inflight_.emplace(id, std::move(ticket));
  return id;
}

void SessionHost::startSession(const std::string& routingId, InboundMessage message,
                               ClientId owner) {
  auto envelope = message.envelope();
  std::uint64_t requestId = envelope.getRequestId();
  std::string typeName = envelope.getRequest().getStartSession().getSessionType().cStr();
  const ReadySessionType* type = findType(typeName);
  if (type == nullptr) {
    return reply(routingId, requestId,
                 notFound(fmt::format("session type '{}' is not hosted here (hosted: {})", typeName,
                                      fmt::join(typeNames(), ", "))));
  }
  if (sessions_.size() + starting_ >= limits_.maxSessions) {
    return reply(routingId, requestId,
                 overloaded(fmt::format("worker holds its maximum of {} sessions (limit "
                                        "--max-sessions): retry later or on another worker",
                                        limits_.maxSessions)));
  }
  if (!owner.valid()) return reply(routingId, requestId, anonymousClient());
  if (!executor_.acceptsWork()) return reply(routingId, requestId, refusedWhileStuck());
  SessionId id{ids_.next()};
  // Every field is read before anything is reserved: a malformed one throws,
  // and a throw after the reservation would hold a slot forever (fuzzing).
  std::string key = schedulingKey(envelope.getExperiment().cStr());
  if (Status reserved = quotas_.reserve(owner, type->info.footprint); !reserved.ok()) {
    return reply(routingId, requestId, reserved);
  }
  std::uint64_t ticket = openTicket(routingId, requestId, envelope.getTimeoutMs(), nullptr);
  ++starting_;
  inflight_[ticket]->creates = true;
  inflight_[ticket]->creator = owner;
  inflight_[ticket]->footprint = type->info.footprint;
  post(key, ticket,
       [type, id, owner, maxBytes = limits_.maxBenchmarkBytes, message = std::move(message)] {
         return executeStart(*type, id, owner, message, maxBytes);
       });
}

void SessionHost::handleSessionRequest(const std::string& routingId, InboundMessage message,
                                       ClientId client) {
  auto envelope = message.envelope();
  auto request = envelope.getRequest();
  std::uint64_t sessionId = 0;
  switch (request.which()) {
    case wire::Request::STEP:
      sessionId = request.getStep().getSessionId();
      break;
    case wire::Request::FORK:
      sessionId = request.getFork().getSessionId();
      break;
    case wire::Request::END_SESSION:
      sessionId = request.getEndSession().getSessionId();
      break;
    default:
      sessionId = request.getSendSessionParameter().getSessionId();
      break;
  }
  const auto unknown = [&] {
    return notFound(fmt::format(
        "session {:x} does not exist on this worker (ended, expired, or never started here)",
        sessionId));
  };
  auto found = sessions_.find(SessionId{sessionId});
  if (found == sessions_.end() || found->second->retired) {
    if (auto why = dropped_.why(sessionId)) {
      return reply(
          routingId, envelope.getRequestId(),
          notFound(fmt::format("session {:x} was dropped by this worker: {}", sessionId, *why)));
    }
    return reply(routingId, envelope.getRequestId(), unknown());
  }
  SessionRecord& record = *found->second;
  // Every session has an owner (startSession refuses anonymous clients), and
  // only the holder of the owner's secret is that owner. Anyone else hears
  // what an id that never existed gets: the answer tells no one that it does.
  if (record.owner != client) return reply(routingId, envelope.getRequestId(), unknown());
  if (request.isFork() && sessions_.size() + starting_ >= limits_.maxSessions) {
    return reply(routingId, envelope.getRequestId(),
                 overloaded(fmt::format("worker holds its maximum of {} sessions (limit "
                                        "--max-sessions): cannot fork",
                                        limits_.maxSessions)));
  }
  runOnStrand(record, routingId, std::move(message));
}

void SessionHost::runOnStrand(SessionRecord& record, const std::string& routingId,
                              InboundMessage message) {
  if (record.busy) {
    record.waiting.push_back({routingId, std::move(message)});
    ++waitingRequests_;
    return;
  }
  auto envelope = message.envelope();
  auto request = envelope.getRequest();
  if (!executor_.acceptsWork()) {
    return reply(routingId, envelope.getRequestId(), refusedWhileStuck());
  }
  // A fork reserves its place when it runs, not while it waits on the strand.
  if (request.isFork()) {
    if (Status reserved = quotas_.reserve(record.owner, footprintOf(record)); !reserved.ok()) {
      return reply(routingId, envelope.getRequestId(), reserved);
    }
  }
  record.busy = true;
  std::uint64_t ticket =
      openTicket(routingId, envelope.getRequestId(), envelope.getTimeoutMs(), &record);
  SessionRecord* target = &record;
  const std::string& key = record.experiment;
  switch (request.which()) {
    case wire::Request::STEP:
      if (SplitActions* split = record.session->splitActions(); limits_.loopWaits && split) {
        return startSplit(record, *split, ticket, std::move(message));
      }
      if (runsInline(record)) {
        auto started = std::chrono::steady_clock::now();
        Completion completion = executeStep(record, message);
        completion.ran = std::chrono::steady_clock::now() - started;
        completion.target = scope_.target;
        completion.ticket = ticket;
        return completeInline(std::move(completion));
      }
      return post(key, ticket,
                  [target, message = std::move(message)] { return executeStep(*target, message); });
    case wire::Request::FORK: {
      SessionId child{ids_.next()};
      ++starting_;
      inflight_[ticket]->creates = true;
      inflight_[ticket]->creator = record.owner;
      inflight_[ticket]->footprint = footprintOf(record);
      return post(key, ticket, [target, child, message = std::move(message)] {
        return executeFork(*target, child, message);
      });
    }
    case wire::Request::END_SESSION: {
      auto remaining = static_cast<std::uint32_t>(sessions_.size() - 1);
      return post(key, ticket, [target, remaining, message = std::move(message)] {
        return executeEnd(*target, message, remaining);
      });
    }
    default:
      return post(key, ticket, [target, message = std::move(message)] {
        return executeParameter(*target, message);
      });
  }
}

bool SessionHost::runsInline(const SessionRecord& record) const {
  // Two timed steps first: the first step of a session often pays for
  // warm-up and says little about the next ones.
  return limits_.inlineStepBudget > Duration::zero() && record.stepsTimed >= 2 &&
         record.stepCost < limits_.inlineStepBudget && executor_.idle();
}

void SessionHost::startSplit(SessionRecord& record, SplitActions& split, std::uint64_t ticket,
                             InboundMessage message) {
  auto running = std::make_unique<Split>(
      Split{SplitStep(record, split, std::move(message)), std::chrono::steady_clock::now()});
  SplitPhase phase = running->step.start();
  advanceSplit(ticket, std::move(running), phase);
}

void SessionHost::advanceSplit(std::uint64_t ticket, std::unique_ptr<Split> split,
                               SplitPhase phase) {
  const std::string& key = split->step.record().experiment;
  switch (phase) {
    case SplitPhase::kWaiting:
      splitWaits_[ticket] = std::move(split);
      return;
    case SplitPhase::kOnPool:
      return post(key, ticket, [split = std::move(split)] {
        split->step.runBlocking();
        return split->step.complete();
      });
    case SplitPhase::kReady:
      break;
  }
  if (!split->step.quickToComplete()) {
    return post(key, ticket, [split = std::move(split)] { return split->step.complete(); });
  }
  Completion completion = split->step.complete();
  completion.ran = std::chrono::steady_clock::now() - split->started;
  completion.target = scope_.target;
  completion.ticket = ticket;
  completeInline(std::move(completion));
}

void SessionHost::resumeSplit(std::uint64_t ticket) {
  auto found = splitWaits_.find(ticket);
  if (found == splitWaits_.end()) return;
  std::unique_ptr<Split> split = std::move(found->second);
  splitWaits_.erase(found);
  SplitPhase phase = split->step.resume();
  advanceSplit(ticket, std::move(split), phase);
}

void SessionHost::onWaitReady(std::uint64_t ticket) { resumeSplit(ticket); }

void SessionHost::appendWaits(std::vector<LoopWait>& out) const {
  for (const auto& [ticket, split] : splitWaits_) {
    out.push_back({split->step.wait().fd, scope_.target, ticket});
  }
}

void SessionHost::completeInline(Completion completion) {
  inlineDone_.push_back(std::move(completion));
  if (drainingInline_) return;
  drainingInline_ = true;
  while (!inlineDone_.empty()) {
    Completion next = std::move(inlineDone_.front());
    inlineDone_.pop_front();
    onCompletion(std::move(next));
  }
  drainingInline_ = false;
}

void SessionHost::onCompletion(Completion completion) {
  auto found = inflight_.find(completion.ticket);
  if (found == inflight_.end()) return;
  std::unique_ptr<Ticket> ticket = std::move(found->second);
  inflight_.erase(found);
  bool timedOut = ticket->answered;
  if (completion.created && !timedOut) {
    // What its benchmark weighs is known only now, once it is read.
    Status held = quotas_.holdProgram(ticket->creator, completion.created->program,
                                      completion.created->programBytes);
    if (!held.ok()) {
      completion.reply = encodeErrorReply(ticket->requestId, held);
      completion.error = held.code();
      completion.created.reset();
    }
  }
  if (!timedOut) replies_.send(ticket->routingId, std::move(completion.reply));
  stepsTotal_ += completion.steps;
  SessionRecord* record = ticket->record;
  if (limits_.observer != nullptr) {
    if (completion.error != ErrorCode::kOk && !timedOut)
      limits_.observer->onError(completion.error);
    if (completion.steps > 0 && record != nullptr && record->type != nullptr) {
      limits_.observer->onSteps(record->type->info.name, completion.ran, completion.steps);
    }
  }
  if (ticket->creates) {
    --starting_;
    if (!completion.created || timedOut) quotas_.release(ticket->creator, ticket->footprint);
  }
  if (completion.created && !timedOut) {
    SessionRecord& created = *completion.created;
    logger_->debug("session started: {} type={} target={:x}",
                   logfields::sessionAndExperiment(created.id.value, created.experiment),
                   created.type != nullptr ? created.type->info.name : "?", scope_.target);
    sessions_.emplace(created.id, std::move(completion.created));
  }
  if (record == nullptr) return;
  record->busy = false;
  if (completion.steps > 0) {
    record->stepCost =
        record->stepsTimed == 0 ? completion.ran : (3 * record->stepCost + completion.ran) / 4;
    ++record->stepsTimed;
  }
  if (completion.sessionOver || timedOut || record->retired) return erase(*record);
  dispatchNext(*record);
}

void SessionHost::dispatchNext(SessionRecord& record) {
  while (!record.waiting.empty() && !record.busy) {
    SessionRecord::Waiting next = std::move(record.waiting.front());
    record.waiting.pop_front();
    --waitingRequests_;
    runOnStrand(record, next.routingId, std::move(next.message));
  }
}

void SessionHost::erase(SessionRecord& record) {
  logger_->debug("session ended: {} steps_timed={}",
                 logfields::sessionAndExperiment(record.id.value, record.experiment),
                 record.stepsTimed);
  for (auto& waiting : record.waiting) {
    --waitingRequests_;
    reply(waiting.routingId, waiting.message.envelope().getRequestId(),
          notFound(fmt::format("session {:x} ended before this request ran", record.id.value)));
  }
  quotas_.dropProgram(record.owner, record.program, record.programBytes);
  quotas_.release(record.owner, footprintOf(record));
  sessions_.erase(record.id);
}

template <class Predicate>
std::size_t SessionHost::retireWhere(Predicate matches) {
  std::vector<SessionRecord*> chosen;
  for (auto& [id, record] : sessions_) {
    if (matches(*record)) chosen.push_back(record.get());
  }
  for (SessionRecord* record : chosen) {
    if (record->busy) {
      record->retired = true;
    } else {
      erase(*record);
    }
  }
  return chosen.size();
}

void SessionHost::endSessionsOf(ClientId client) {
  std::size_t ended = retireWhere([this, client](const SessionRecord& r) {
    if (r.owner != client) return false;
    logger_->info("session lost: {} client={:x} went silent for the lease",
                  logfields::sessionAndExperiment(r.id.value, r.experiment), client.value);
    return true;
  });
  if (ended != 0) {
    logger_->info("client {:x} went silent: ending its {} sessions", client.value, ended);
  }
}

std::size_t SessionHost::dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) {
  auto reason = std::make_shared<const std::string>(why);
  std::size_t ended = retireWhere([&](const SessionRecord& r) {
    auto lease = leases_.find(r.owner);
    if (lease != leases_.end() && lease->second >= since) return false;
    dropped_.remember(r.id.value, reason);
    logger_->info("session dropped: {} client={:x}: {}",
                  logfields::sessionAndExperiment(r.id.value, r.experiment), r.owner.value, why);
    return true;
  });
  if (ended != 0) logger_->warn("dropped {} sessions: {}", ended, why);
  return ended;
}

void SessionHost::retireAll() {
  retireWhere([](const SessionRecord&) { return true; });
}

void SessionHost::tick() {
  // A split step whose compiler stayed silent past its own deadline is
  // resumed so that the session reports the hang (the steady clock: the
  // compiler is a real process).
  if (!splitWaits_.empty()) {
    auto steadyNow = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> overdue;
    for (const auto& [ticket, split] : splitWaits_) {
      if (steadyNow >= split->step.wait().deadline) overdue.push_back(ticket);
    }
    for (std::uint64_t ticket : overdue) resumeSplit(ticket);
  }
  TimePoint now = clock_.now();
  for (auto& [id, ticket] : inflight_) {
    if (ticket->answered || now < ticket->deadline) continue;
    ticket->answered = true;
    if (ticket->record != nullptr) {
      logger_->warn(
          "session timed out: {} request={} overran its deadline; ending the session",
          logfields::sessionAndExperiment(ticket->record->id.value, ticket->record->experiment),
          ticket->requestId);
    }
    reply(ticket->routingId, ticket->requestId, overran(*ticket));
    if (ticket->record != nullptr && ticket->record->session) ticket->record->session->cancel();
  }
  if (now < nextLeaseSweep_) return;
  nextLeaseSweep_ = now + std::chrono::milliseconds(200);
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (now - it->second > limits_.leaseTimeout) {
      endSessionsOf(it->first);
      it = leases_.erase(it);
    } else {
      ++it;
    }
  }
}

Status SessionHost::overran(const Ticket& ticket) const {
  std::string message = "the request overran its deadline; its session is ended";
  if (ticket.shortened) {
    message += fmt::format(
        " (it asked for longer than this worker's longest deadline, {} ms, and was given that: "
        "the operator sets it with --max-deadline-seconds)",
        toMillis(longestDeadline(limits_)));
  }
  if (std::string stuck = executor_.stuckNote(); !stuck.empty()) message += "; " + stuck;
  return timeoutError(std::move(message));
}

Status SessionHost::refusedWhileStuck() const {
  return overloaded(executor_.stuckNote() +
                    "; this worker takes no new work meanwhile: retry on another worker");
}

void SessionHost::clear() {
  splitWaits_.clear();  // they refer to sessions
  quotas_.clear();
  sessions_.clear();
  inflight_.clear();
  leases_.clear();
}

HostLoad SessionHost::load() const {
  HostLoad load;
  load.liveSessions = static_cast<std::uint32_t>(sessions_.size());
  load.busySessions = static_cast<std::uint32_t>(inflight_.size());
  load.waitingRequests = waitingRequests_;
  load.stepsTotal = stepsTotal_;
  return load;
}

}  // namespace kiln
