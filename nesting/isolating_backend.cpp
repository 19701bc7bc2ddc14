#include "nesting/isolating_backend.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "common/base/exit_codes.h"
#include "common/security/identity.h"
#include "common/transport/readiness_poll.h"
#include "common/transport/router_io.h"
#include "nesting/isolated_child.h"
#include "nesting/nesting_host.h"

namespace kiln::nesting {

using namespace isolation;

namespace {

// How long past its deadline a request may stay unanswered by its child
// before the child is presumed hung (the child answers its own timeouts).
constexpr Duration kHangGrace = std::chrono::milliseconds(500);
// A child's loop reports its load every 50 ms: silent this long, it is stuck.
// A child that still talks answers its own overdue requests (SessionHost),
// so a request it is merely slow to run (queued behind a replay storm after
// a restart) is no reason to kill it.
constexpr Duration kSilentFor = std::chrono::seconds(2);
// What a child gets to stop cleanly when the drain left less: an idle one
// needs a moment to shut its contexts down. Well inside kStopGrace, which
// bounds the host's whole shutdown after its drain.
constexpr Duration kChildStopGrace = std::chrono::seconds(1);

bool stoppedForDamage(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == kExitRestartAfterCaughtCrash;
}

std::string describeExit(int status) {
  if (stoppedForDamage(status)) {
    return "stopped after a crash it caught (its memory may be damaged)";
  }
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  }
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

std::string_view bytesOf(kj::ArrayPtr<const capnp::word> words) {
  return {reinterpret_cast<const char*>(words.begin()), words.size() * sizeof(capnp::word)};
}

zmq::message_t reencode(const InboundMessage& message) {
  capnp::MallocMessageBuilder builder(message.sizeBytes() / sizeof(capnp::word) + 8);
  builder.setRoot(message.envelope());
  return encodeFrame(builder);
}

}  // namespace

ChildProcessWorkers::ChildProcessWorkers(const FrontendParts& parts, UnderlyingDirectory& directory)
    : parts_(parts),
      directory_(directory),
      router_(zmq_, zmq::socket_type::router),
      tokens_(parts.pool.threads()) {
  router_.set(zmq::sockopt::linger, 0);
  router_.set(zmq::sockopt::sndhwm, 0);
  router_.set(zmq::sockopt::rcvhwm, 0);
  // As a worker's own socket: a frame a child's reply could be (up to the
  // operator's limit) fits; a damaged child's far larger one is cut off
  // before it is buffered.
  router_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(2 * parts.frames.maxMessageBytes));
  // A private directory (mode 0700) keeps other local users off the socket.
  auto socketDirectory = WorkingDirectory::create({}, "kiln-isolate");
  if (!socketDirectory.ok()) {
    broken_ = socketDirectory.status();
    return;
  }
  socketDirectory_.emplace(std::move(socketDirectory).value());
  endpoint_ = "ipc://" + (socketDirectory_->path() / "children").string();
  try {
    router_.bind(endpoint_);
  } catch (const zmq::error_t& e) {
    broken_ = internalError(
        fmt::format("cannot bind {} for the child processes: {}", endpoint_, e.what()));
  }
  if (!broken_.ok()) parts_.logger->error("isolation unavailable: {}", broken_.toString());
}

ChildProcessWorkers::~ChildProcessWorkers() { clear(); }

void ChildProcessWorkers::reply(const std::string& routingId, std::uint64_t requestId,
                                const Status& status) {
  parts_.replies.send(routingId, encodeErrorReply(requestId, status));
}

ChildProcessWorkers::Child* ChildProcessWorkers::childOf(
    const std::vector<std::uint64_t>& workers) {
  if (workers.empty()) return nullptr;
  auto record = directory_.workers().find(workers.front());
  if (record == directory_.workers().end()) return nullptr;
  auto child = children_.find(record->second.spec.experiment);
  return child == children_.end() ? nullptr : &child->second;
}

void ChildProcessWorkers::keepAlive(ClientId client, const std::vector<std::uint64_t>& workers) {
  if (Child* child = childOf(workers)) {
    std::string id;
    putU64(id, client.value);
    sendToChild(*child, {std::string(1, kKeepAlive), id}, true);
  }
}

std::size_t ChildProcessWorkers::dropSessionsOfClientsSilentSince(TimePoint since,
                                                                  const std::string& why) {
  // A span, not a time point: the child reads it against its own clock.
  const auto silent = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::max(Duration::zero(), parts_.clock.now() - since));
  std::string span;
  putU64(span, static_cast<std::uint64_t>(silent.count()));
  for (auto& [experiment, child] : children_) {
    sendToChild(child, {std::string(1, kDropSilentClients), span, why}, true);
  }
  return 0;
}

void ChildProcessWorkers::addBenchmark(const std::vector<std::uint64_t>& workers,
                                       const InboundMessage& message) {
  // Children forked later inherit the host's cache; the running child of
  // the caller's own experiment gets a copy. Both keep the bytes under the
  // client's own cache key (privateCacheKey).
  if (Child* child = childOf(workers)) {
    zmq::message_t copy = reencode(message);
    sendToChild(*child, {std::string(1, kBenchmark), std::string(copy.data<char>(), copy.size())},
                true);
  }
}

Status ChildProcessWorkers::create(const UnderlyingSpec& spec) {
  auto [it, fresh] = children_.try_emplace(spec.experiment);
  Child& child = it->second;
  if (fresh) {
    child.experiment = spec.experiment;
    if (Status started = spawn(child); !started.ok()) {
      children_.erase(it);
      return started;
    }
    parts_.logger->info("experiment '{}' runs in child process {}", spec.experiment, child.pid);
  }
  loads_[spec.workerId] = {};
  sendCreate(child, spec);
  return okStatus();
}

void ChildProcessWorkers::sendCreate(Child& child, const UnderlyingSpec& spec) {
  capnp::MallocMessageBuilder builder(256);
  toWire(spec, initEnvelope(builder, 0).initRequest().initCreateWorker().initSpec());
  zmq::message_t frame = encodeFrame(builder);
  sendToChild(child, {std::string(1, kCreate), std::string(frame.data<char>(), frame.size())},
              true);
}

void ChildProcessWorkers::release(const UnderlyingSpec& spec) {
  std::string id;
  putU64(id, spec.workerId);
  sendToChild(children_.at(spec.experiment), {std::string(1, kRelease), id}, true);
}

void ChildProcessWorkers::forget(const UnderlyingSpec& spec, bool lastOfExperiment) {
  loads_.erase(spec.workerId);
  if (!lastOfExperiment) return;
  if (auto child = children_.find(spec.experiment); child != children_.end()) {
    stopChild(child->second);
    children_.erase(child);
  }
}

void ChildProcessWorkers::forward(const UnderlyingSpec& spec, const std::string& routingId,
                                  InboundMessage message) {
  forward(children_.at(spec.experiment), routingId, std::move(message));
}

void ChildProcessWorkers::setWeights(const std::map<std::string, std::uint32_t>& weights) {
  tokens_.setWeights(weights);
}

// --- proxying --------------------------------------------------------------

void ChildProcessWorkers::forward(Child& child, const std::string& routingId,
                                  InboundMessage message) {
  auto envelope = message.envelope();
  auto request = envelope.getRequest();
  Outgoing out;
  Flight& flight = out.flight;
  flight.routingId = routingId;
  flight.requestId = envelope.getRequestId();
  // As long as the child's SessionHost gives it (never past the longest).
  Duration timeout = requestTimeout(parts_.limits, envelope.getTimeoutMs());
  child.longestTimeout = std::max(child.longestTimeout, timeout);
  flight.deadline = parts_.clock.now() + timeout;
  // Name the request by everything its session was sent so far (see
  // isolation_guard.h); the chain is advanced when the request is accepted.
  std::uint64_t* sessionChain = nullptr;
  switch (request.which()) {
    case wire::Request::START_SESSION: {
      auto start = request.getStartSession();
      auto benchmark = start.getBenchmark();
      auto program = benchmark.getProgram();
      std::string what = fmt::format("{}\n{}\n{}\n", start.getSessionType().cStr(),
                                     benchmark.getUri().cStr(), start.getActionSpace());
      flight.kind = 'S';
      flight.chain = extendChain(
          extendChain(0, 'S', what), 'B',
          std::string_view(reinterpret_cast<const char*>(program.begin()), program.size()));
      flight.inherit = flight.chain;
      break;
    }
    case wire::Request::STEP: {
      flight.kind = 'T';
      flight.session = request.getStep().getSessionId();
      if (auto found = child.chains.find(flight.session); found != child.chains.end()) {
        std::uint64_t chain = found->second;
        for (auto action : request.getStep().getActions()) {
          chain = extendChain(chain, 'T', bytesOf(capnp::canonicalize(action)));
        }
        flight.chain = chain;
        sessionChain = &found->second;
      }
      break;
    }
    case wire::Request::SEND_SESSION_PARAMETER: {
      auto parameter = request.getSendSessionParameter();
      flight.kind = 'P';
      flight.session = parameter.getSessionId();
      if (auto found = child.chains.find(flight.session); found != child.chains.end()) {
        flight.chain = extendChain(
            found->second, 'P',
            fmt::format("{}\n{}", parameter.getKey().cStr(), parameter.getValue().cStr()));
        sessionChain = &found->second;
      }
      break;
    }
    case wire::Request::FORK:
      flight.kind = 'F';
      flight.session = request.getFork().getSessionId();
      if (auto found = child.chains.find(flight.session); found != child.chains.end()) {
        flight.inherit = found->second;  // a restored fork replays its parent's history
      }
      break;
    case wire::Request::END_SESSION:
      flight.kind = 'E';
      flight.session = request.getEndSession().getSessionId();
      break;
    default:
      break;
  }
  if (flight.chain != 0 && guard_.poisoned(flight.chain)) {
    return reply(routingId, flight.requestId,
                 compileError(fmt::format(
                     "this request crashed the compile process of experiment '{}' twice, the "
                     "second time on replay while it ran alone; it is not run again (the session "
                     "is restored without it on its next request)",
                     child.experiment)));
  }
  if (sessionChain != nullptr) *sessionChain = flight.chain;
  out.frame = reencode(message);
  child.held.push_back(std::move(out));
  pump(child);
}

void ChildProcessWorkers::pump(Child& child) {
  if (!child.ready) return;
  while (!child.held.empty() && !child.solo) {
    Outgoing& next = child.held.front();
    bool suspect = next.flight.chain != 0 && guard_.suspect(next.flight.chain);
    if (suspect && !child.inflight.empty()) return;  // wait until it can run alone
    next.flight.solo = suspect;
    child.solo = suspect;
    (void)router_.send(zmq::buffer(child.identity), zmq::send_flags::sndmore);
    (void)router_.send(zmq::buffer(&kRequest, 1), zmq::send_flags::sndmore);
    (void)router_.send(zmq::buffer(next.flight.routingId), zmq::send_flags::sndmore);
    std::string requestId;
    putU64(requestId, next.flight.requestId);
    (void)router_.send(zmq::buffer(requestId), zmq::send_flags::sndmore);
    (void)router_.send(next.frame, zmq::send_flags::none);
    auto key = std::make_pair(next.flight.routingId, next.flight.requestId);
    child.inflight[key] = std::move(next.flight);
    child.held.pop_front();
  }
}

void ChildProcessWorkers::sendToChild(Child& child, std::vector<std::string> parts, bool control) {
  if (!child.ready) {
    if (control) child.outbox.push_back(std::move(parts));
    return;
  }
  (void)router_.send(zmq::buffer(child.identity), zmq::send_flags::sndmore);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    (void)router_.send(zmq::buffer(parts[i]),
                       i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

void ChildProcessWorkers::onSocketReadable() {
  for (int i = 0; i < 4096; ++i) {
    std::vector<zmq::message_t> parts;
    zmq::message_t part;
    if (!router_.recv(part, zmq::recv_flags::dontwait)) return;
    parts.push_back(std::move(part));
    while (parts.back().more()) {
      zmq::message_t next;
      if (!router_.recv(next, zmq::recv_flags::dontwait)) break;
      parts.push_back(std::move(next));
    }
    std::string identity(parts[0].data<char>(), parts[0].size());
    parts.erase(parts.begin());
    onChildMessage(identity, parts);
  }
}

void ChildProcessWorkers::onChildMessage(const std::string& identity,
                                         std::vector<zmq::message_t>& parts) {
  auto owner = byIdentity_.find(identity);
  if (owner == byIdentity_.end()) return;  // a stale child
  auto found = children_.find(owner->second);
  if (found == children_.end() || found->second.identity != identity) return;
  Child& child = found->second;
  child.lastHeard = parts_.clock.now();  // any message shows it alive
  auto message = decodeChildMessage(partViews(parts), parts_.frames);
  if (!message.ok()) {
    parts_.logger->warn("ignoring a message from the child process of experiment '{}': {}",
                        child.experiment, message.status().message());
    return;
  }
  if (std::holds_alternative<Hello>(*message)) {
    child.ready = true;
    std::vector<std::vector<std::string>> outbox = std::move(child.outbox);
    child.outbox.clear();
    for (auto& queued : outbox) sendToChild(child, std::move(queued), true);
    return pump(child);
  }
  if (auto* reply = std::get_if<ChildReply>(&*message)) {
    return onReply(child, *reply, std::move(parts[2]));
  }
  if (std::holds_alternative<AcquireToken>(*message)) return onTokenRequest(child);
  if (auto* back = std::get_if<TokenBack>(&*message)) {
    // A child that holds no token has none to give back: counting it would
    // free a slot another experiment's child holds.
    if (child.tokens.empty()) {
      parts_.logger->warn("the child process of experiment '{}' returned a token it did not hold",
                          child.experiment);
      return;
    }
    child.tokens.pop_front();
    tokens_.release(child.experiment, back->ran);
    return tokens_.pump();
  }
  if (auto* loads = std::get_if<Loads>(&*message)) {
    for (const WorkerLoad& record : loads->workers) {
      auto worker = directory_.workers().find(record.workerId);
      if (worker == directory_.workers().end() ||
          worker->second.spec.experiment != child.experiment) {
        continue;
      }
      loads_[record.workerId] = record.load;
    }
    return;
  }
  // Stopping, the host forgets every worker at once (clear), and no child
  // may be erased while stopCleanly() walks them.
  if (auto* released = std::get_if<Released>(&*message); released != nullptr && !stopping_) {
    // Only a worker of this child's experiment (the host ignores one that
    // is not being released).
    auto worker = directory_.workers().find(released->workerId);
    if (worker != directory_.workers().end() &&
        worker->second.spec.experiment == child.experiment) {
      directory_.released(released->workerId, released->sessionsEnded);
    }
  }
}

void ChildProcessWorkers::onReply(Child& child, const ChildReply& reply, zmq::message_t frame) {
  // Only the answer to a request this child was given goes out, to the peer
  // that sent it: a child runs clients' compile work in-process, and one
  // whose memory that work damaged must not reach other peers.
  auto found = reply.summary
                   ? child.inflight.find(std::make_pair(reply.routingId, reply.summary->requestId))
                   : child.inflight.end();
  if (found == child.inflight.end()) {
    parts_.logger->warn(
        "the child process of experiment '{}' sent a reply to no request it was given; dropped",
        child.experiment);
    return pump(child);
  }
  const ReplySummary& summary = *reply.summary;
  Flight& flight = found->second;
  if (summary.kind == ReplySummary::Kind::kSessionStarted) {
    child.chains[summary.sessionId] = flight.inherit;
  } else if (summary.kind == ReplySummary::Kind::kForked && flight.inherit != 0) {
    child.chains[summary.sessionId] = flight.inherit;
  } else if (flight.kind == 'E') {
    child.chains.erase(flight.session);
  }
  // An error may end the session as well; a later request then meets not-found.
  if (flight.chain != 0) guard_.cleared(flight.chain);  // it ran and the child lived
  if (flight.solo) child.solo = false;
  bool answered = flight.answered;
  child.inflight.erase(found);
  if (!answered) parts_.replies.send(reply.routingId, std::move(frame));
  pump(child);
}

void ChildProcessWorkers::onTokenRequest(Child& child) {
  tokens_.request(child.experiment,
                  [this, experiment = child.experiment, generation = child.generation] {
                    auto found = children_.find(experiment);
                    if (found == children_.end() || found->second.generation != generation) {
                      tokens_.release(experiment, Duration::zero());  // asked by a dead child
                      return;
                    }
                    found->second.tokens.push_back(parts_.clock.now());
                    sendToChild(found->second, {std::string(1, kGrant)}, true);
                  });
  tokens_.pump();
}

// --- faults ------------------------------------------------------------------

Status ChildProcessWorkers::spawn(Child& child) {
  if (!broken_.ok()) return broken_;
  child.identity = fmt::format("child-{}", ++spawned_);
  child.ready = false;
  child.lastHeard = parts_.clock.now();  // not silent before its hello is due
  child.solo = false;
  child.killedForHang = false;
  ++child.generation;
  ChildSetup setup{endpoint_,        child.identity,
                   child.experiment, parts_.pool.threads(),
                   ::getpid(),       parts_.limits.compileMemoryBytes,
                   parts_.frames};
  KILN_ASSIGN_OR_RETURN(child.pid, forkIsolatedChild(setup, parts_));
  byIdentity_[child.identity] = child.experiment;
  return okStatus();
}

void ChildProcessWorkers::stopChild(Child& child) {
  if (child.pid > 0) {
    ::kill(child.pid, SIGKILL);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    removeSessionDirectoriesOf(parts_.workingDirectory, child.pid);
  }
  child.pid = -1;
  child.ready = false;
  // Token requests the dead child left queued are stale from now: the pump
  // below releases them instead of granting them to nobody. (Granted, they
  // were counted as held by the next child, which never returns them, and
  // that child was killed as stuck once the grant looked older than every
  // deadline: after every restart with work queued.)
  ++child.generation;
  for (TimePoint granted : child.tokens) {
    tokens_.release(child.experiment, parts_.clock.now() - granted);
  }
  child.tokens.clear();
  byIdentity_.erase(child.identity);
  tokens_.pump();
}

void ChildProcessWorkers::checkHangs(Child& child, TimePoint now) {
  std::string why;  // empty while the child looks alive
  const bool silent = now - child.lastHeard > kSilentFor;
  for (auto& [key, flight] : child.inflight) {
    if (flight.answered || now < flight.deadline + kHangGrace) continue;
    flight.answered = true;
    if (why.empty() && silent) {
      why = fmt::format(
          "request {} (kind {}) is unanswered past its deadline and the child has "
          "been silent for {:.1f} s",
          flight.requestId, flight.kind == 0 ? '?' : flight.kind,
          std::chrono::duration<double>(now - child.lastHeard).count());
    }
    reply(flight.routingId, flight.requestId,
          timeoutError(fmt::format("the request overran its deadline and the compile process of "
                                   "experiment '{}' stopped answering; it is being restarted",
                                   child.experiment)));
  }
  // A task that ignored cancel() keeps its slot token forever: past every
  // deadline the child has been given, the only cure is a new process.
  Duration limit = (child.longestTimeout > Duration::zero() ? child.longestTimeout
                                                            : longestDeadline(parts_.limits)) +
                   kHangGrace;
  if (why.empty() && !child.tokens.empty() && now - child.tokens.front() > limit) {
    why = fmt::format("a slot token is held for {:.1f} s",
                      std::chrono::duration<double>(now - child.tokens.front()).count());
  }
  if (!why.empty() && !child.killedForHang && child.pid > 0) {
    parts_.logger->warn("the child process {} of experiment '{}' is stuck ({}): killing it",
                        child.pid, child.experiment, why);
    child.killedForHang = true;
    ::kill(child.pid, SIGKILL);
  }
}

void ChildProcessWorkers::onChildDied(Child& child, const std::string& how, bool crashed) {
  std::vector<std::uint64_t> running;
  for (const auto& [key, flight] : child.inflight) running.push_back(flight.chain);
  // A child that stopped for damage answered its crashing request itself:
  // what is still in flight was merely queued, and is not to blame.
  std::vector<std::uint64_t> poisoned =
      crashed ? guard_.onDeath(running) : std::vector<std::uint64_t>{};
  parts_.logger->warn(
      "the child process {} of experiment '{}' {} with {} requests running; "
      "restarting it{}",
      child.pid, child.experiment, how, running.size(),
      poisoned.empty() ? "" : " (one request crashed it twice: refused from now)");
  for (auto& [key, flight] : child.inflight) {
    if (flight.answered) continue;
    bool culprit = std::find(poisoned.begin(), poisoned.end(), flight.chain) != poisoned.end() &&
                   flight.chain != 0;
    Status status =
        culprit ? compileError(fmt::format("this request crashed the compile process of "
                                           "experiment '{}' ({}) again on replay; it is not run "
                                           "again (the session is restored without it on its "
                                           "next request)",
                                           child.experiment, how))
                : disconnected(fmt::format("the compile process of experiment '{}' {} while this "
                                           "request ran; it was restarted: restore the session by "
                                           "replay",
                                           child.experiment, how));
    reply(flight.routingId, flight.requestId, status);
  }
  child.inflight.clear();
  child.chains.clear();
  child.outbox.clear();
  child.pid = -1;  // reaped already
  stopChild(child);
  ++child.restarts;
  // Releases in progress are complete: the sessions are gone with the process.
  std::vector<std::uint64_t> releasing;
  for (const auto& [id, worker] : directory_.workers()) {
    if (worker.spec.experiment == child.experiment && worker.releasing) releasing.push_back(id);
  }
  std::string experiment = child.experiment;
  for (std::uint64_t id : releasing) directory_.released(id, loads_[id].liveSessions);
  auto still = children_.find(experiment);
  if (still == children_.end()) return;  // its last worker was released
  if (Status started = spawn(still->second); !started.ok()) {
    parts_.logger->error("cannot restart the child process of experiment '{}': {}", experiment,
                         started.toString());
    return;
  }
  for (const auto& [id, worker] : directory_.workers()) {
    if (worker.spec.experiment == experiment) {
      loads_[id] = {};
      sendCreate(still->second, worker.spec);
    }
  }
}

void ChildProcessWorkers::tick() {
  TimePoint now = parts_.clock.now();
  std::vector<std::string> experiments;
  for (auto& [name, child] : children_) experiments.push_back(name);
  for (const std::string& name : experiments) {
    auto found = children_.find(name);
    if (found == children_.end()) continue;
    Child& child = found->second;
    if (child.pid > 0) {
      int status = 0;
      pid_t ended = ::waitpid(child.pid, &status, WNOHANG);
      if (ended == child.pid) {
        // Its compilers died with it (PR_SET_PDEATHSIG); their files did not.
        removeSessionDirectoriesOf(parts_.workingDirectory, child.pid);
        onChildDied(child, describeExit(status), !stoppedForDamage(status));
        continue;
      }
    }
    checkHangs(child, now);
  }
}

LoadReport ChildProcessWorkers::load() const {
  LoadReport report;
  for (const auto& [id, worker] : directory_.workers()) {
    if (worker.releasing) continue;
    auto reported = loads_.find(id);
    const LoadFigures load = reported == loads_.end() ? LoadFigures{} : reported->second;
    report.underlying.push_back(UnderlyingStatus{worker.spec, load});
    report.total.liveSessions += load.liveSessions;
    report.total.queuedRequests += load.queuedRequests;
    report.total.stepsTotal += load.stepsTotal;
  }
  for (const auto& [name, child] : children_) {
    report.total.queuedRequests += static_cast<std::uint32_t>(child.held.size());
  }
  report.total.busySlots = tokens_.inUse();
  return report;
}

void ChildProcessWorkers::stopCleanly(Duration within) {
  stopping_ = true;
  const std::string stopping =
      "the nesting host is stopping (the operator sent it SIGTERM or SIGINT): restore the session "
      "on another worker";
  for (auto& [name, child] : children_) {
    // Not sent to the child: it would refuse it anyway.
    for (Outgoing& held : child.held) {
      reply(held.flight.routingId, held.flight.requestId, disconnected(stopping));
    }
    child.held.clear();
    if (child.pid > 0) ::kill(child.pid, SIGTERM);
  }
  const auto until = std::chrono::steady_clock::now() + std::max(within, kChildStopGrace);
  ReadinessPoll poll;
  const std::size_t link = poll.addSocket(router_);
  // The children's answers are relayed and their slot tokens granted meanwhile.
  while (reapStopped() != 0 && std::chrono::steady_clock::now() < until) {
    poll.wait(std::chrono::milliseconds(20));
    if (poll.ready(link)) onSocketReadable();
  }
  for (auto& [name, child] : children_) {
    if (child.pid <= 0) continue;
    parts_.logger->warn(
        "the child process {} of experiment '{}' did not stop within {} ms of the drain "
        "(--drain-seconds): killing it",
        child.pid, child.experiment, toMillis(std::max(within, kChildStopGrace)));
    answerUnanswered(child, stopping);
    stopChild(child);
  }
}

std::size_t ChildProcessWorkers::reapStopped() {
  std::size_t running = 0;
  std::vector<std::pair<Child*, int>> ended;
  for (auto& [name, child] : children_) {
    if (child.pid <= 0) continue;
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) == child.pid) {
      ended.emplace_back(&child, status);
    } else {
      ++running;
    }
  }
  // What an exited child sent (its socket lingered until it was delivered)
  // is read before anything it was given counts as unanswered.
  if (!ended.empty()) onSocketReadable();
  for (auto& [stopped, status] : ended) {
    Child& child = *stopped;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      parts_.logger->info("the child process {} of experiment '{}' stopped cleanly", child.pid,
                          child.experiment);
    } else {
      parts_.logger->warn("the child process {} of experiment '{}' {} while it stopped", child.pid,
                          child.experiment, describeExit(status));
    }
    answerUnanswered(child,
                     "the nesting host is stopping (the operator sent it SIGTERM or "
                     "SIGINT) and this request's compile process ended first: restore "
                     "the session on another worker");
    removeSessionDirectoriesOf(parts_.workingDirectory, child.pid);
    child.pid = -1;  // reaped: stopChild (clear) only forgets it
  }
  return running;
}

void ChildProcessWorkers::answerUnanswered(Child& child, const std::string& why) {
  for (auto& [key, flight] : child.inflight) {
    if (!flight.answered) reply(flight.routingId, flight.requestId, disconnected(why));
  }
  child.inflight.clear();
}

void ChildProcessWorkers::clear() {
  for (auto& [name, child] : children_) stopChild(child);
  children_.clear();
  loads_.clear();
}

ServingMode isolatingHostMode() {
  return nestingMode<ChildProcessWorkers>([] { return std::make_unique<FifoTaskQueue>(); });
}

}  // namespace kiln::nesting
