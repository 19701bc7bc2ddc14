// The sessions of one worker and the handling of every session RPC. Owned by
// the worker's poll loop thread: the table is only touched there, compile work
// runs on an Executor and comes back as a Completion through a Mailbox. A
// session is a strand: at most one of its requests runs at a time, the others
// wait in order. Deadlines answer "timeout" and retire the overrunning session;
// a client's sessions end when its lease runs out.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/ids.h>
#include <kiln/kit/session_types.h>
#include <kiln/logging.h>
#include "common/base/mailbox.h"
#include "common/base/unique_task.h"
#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "worker/client_quotas.h"
#include "worker/dropped_sessions.h"
#include "worker/session_record.h"

namespace kiln {

// Metrics hooks (worker/worker_metrics.h), called on the loop thread. An
// interface so that session_host stays free of the metrics library.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  // A request of a session of `sessionType` ran `steps` steps in `ran`.
  virtual void onSteps(const std::string& sessionType, Duration ran, std::uint64_t steps) = 0;
  // An error reply of this kind was sent (by the host or by a session).
  virtual void onError(ErrorCode code) = 0;
};

struct HostLimits {
  std::uint32_t maxSessions = 100000;
  // One client cannot take a whole worker from the others
  // (--max-sessions-per-client; worker/client_quotas.h).
  std::uint32_t maxSessionsPerClient = 256;
  // Compiler processes the sessions may hold (SessionFootprint): 40
  // mlgo-inline sessions are 40 opt processes, some 2.6 GiB. Per client
  // (--max-compilers-per-client) and for all clients (--max-compilers).
  std::uint32_t maxCompilersPerClient = 16;
  std::uint32_t maxCompilers = 64;
  // The benchmark bytes one client's sessions hold, each program once
  // (--max-benchmark-bytes-per-client).
  std::uint64_t maxBenchmarkBytesPerClient = std::uint64_t{1} << 30;
  Duration defaultDeadline = std::chrono::seconds(300);
  // The longest deadline a request may ask for (Envelope.timeoutMs): a
  // longer one is shortened to it. Zero = defaultDeadline.
  Duration maxDeadline{};
  Duration leaseTimeout = std::chrono::seconds(30);  // a silent client's sessions end after this
  std::uint64_t maxBenchmarkBytes = 64u << 20;
  // Address space (RLIMIT_AS) of each compile process: the compilers that
  // session types start, and `kiln nest --isolate`'s children, which compile
  // in-process. A runaway compile then fails alone. 0 = no limit.
  std::uint64_t compileMemoryBytes = std::uint64_t{4096} << 20;
  // Data a client's module may make the code generator write, checked where
  // the module enters (--max-module-data-bytes; compilers/llvm_engine/module_policy.h).
  std::uint64_t maxModuleDataBytes = std::uint64_t{256} << 20;
  // While the pool is idle, steps of a session that have taken less than
  // this run on the loop thread itself: cheaper than the two thread hops to
  // the pool and back (~30 us each on some VMs). A busy pool means other
  // work is waiting, and then the slots' parallelism wins. Zero disables.
  Duration inlineStepBudget = std::chrono::microseconds(60);
  // Steps of sessions that split their actions wait for their compiler in
  // the owner's poll loop (waits()/onWaitReady()) instead of on a pool
  // thread. Only for owners whose loop polls those waits.
  bool loopWaits = false;
  // --allow-client-tuning: clients may lower the settings every session of
  // the process shares (cache bounds, mlgo time limits), other clients'
  // sessions included. Off, they answer permission denied.
  bool clientTuning = false;
  // Not owned; outlives the hosts. Rides with the limits because every
  // frontend already hands these to each SessionHost it creates.
  SessionObserver* observer = nullptr;
  // What this process's client passes are checked with (common/security/identity.h):
  // WorkerServer draws it and tells only its coordinator. It rides here for
  // the same reason (every host of the process, the forked children of
  // `kiln nest` included, checks passes with it). None: only secrets count.
  PassKey passKey;
};

// The longest deadline a request gets on a host with `limits`.
Duration longestDeadline(const HostLimits& limits);
// How long a request that asked for `timeoutMs` (0 = nothing) may run: the
// default deadline when it asked nothing, and never past longestDeadline().
Duration requestTimeout(const HostLimits& limits, std::uint32_t timeoutMs);

struct HostLoad {
  std::uint32_t liveSessions = 0;
  std::uint32_t busySessions = 0;
  std::uint32_t waitingRequests = 0;
  std::uint64_t stepsTotal = 0;
};

// Where replies go (the worker's ROUTER socket, or a test's list).
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void send(const std::string& routingId, zmq::message_t frame) = 0;
};

// Where compile work runs (the worker's TaskPool, or inline in a test).
class Executor {
 public:
  virtual ~Executor() = default;
  virtual void post(const std::string& key, UniqueTask task) = 0;
  // No task runs or waits: a cheap step may run on the caller instead.
  virtual bool idle() const { return false; }
  // Why work may wait behind tasks that ignore cancellation (see
  // TaskPool::replaceStuck); empty while none holds a thread.
  virtual std::string stuckNote() const { return {}; }
  // False while every thread is held by such a task: new work would never run.
  virtual bool acceptsWork() const { return true; }
};

// The result of a task, applied by the loop thread.
struct Completion {
  std::uint64_t target = 0;  // the SessionHost it belongs to (HostScope::target)
  std::uint64_t ticket = 0;
  zmq::message_t reply;
  std::unique_ptr<SessionRecord> created;  // start or fork
  bool sessionOver = false;                // end, or an error that ends the session
  std::uint64_t steps = 0;
  Duration ran{};                    // time the task took
  ErrorCode error = ErrorCode::kOk;  // of the reply, for the error metrics
};

enum class SplitPhase : int;  // worker/split_step.h

// A split step waiting for its compiler: the owner's poll loop watches `fd`
// and calls onWaitReady(ticket) on the host `target` when it is ready.
struct LoopWait {
  int fd = -1;
  std::uint64_t target = 0;
  std::uint64_t ticket = 0;
};

// What one SessionHost serves: a plain worker has one with the defaults; a
// nesting host has one per underlying worker, owned by one experiment.
struct HostScope {
  std::uint64_t target = 0;               // underlying worker id; 0 for a plain worker
  std::string experiment;                 // set: the scheduling key of all its work
  std::vector<std::string> sessionTypes;  // empty = every type of the registry
  std::uint32_t weight = 1;
};

class SessionHost {
 public:
  SessionHost(const SessionTypeRegistry& types, BenchmarkCache& cache, HostLimits limits,
              const Clock& clock, Executor& executor, ReplySink& replies,
              Mailbox<Completion>& completions, Logger logger, HostScope scope = {});
  ~SessionHost();

  void handle(const std::string& routingId, InboundMessage message);
  void onCompletion(Completion completion);
  // Answers overrun deadlines and ends the sessions of expired clients.
  void tick();
  // The waits of split steps (HostLimits::loopWaits), and their wake-up: the
  // fd is readable or hung up.
  void appendWaits(std::vector<LoopWait>& out) const;
  void onWaitReady(std::uint64_t ticket);
  // Ends every session (shutdown); waits for nothing: call when no task runs.
  void clear();
  // Ends every session cleanly: idle ones now (their waiting requests are
  // answered), busy ones when their running request completes.
  void retireAll();
  // Refreshes a client's lease without a request (keep-alive on a nesting host).
  void touchLease(ClientId client) { leases_[client] = clock_.now(); }
  // Ends the sessions of every client not heard from since `since` (no
  // request, no keep-alive), as an expired lease would, and answers later
  // requests for them with "not found" and `why`. For a worker cut off from
  // its coordinator (WorkerServer): those clients are restoring their
  // sessions elsewhere, and a copy left here must take no late step.
  // Returns how many sessions it ended.
  std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why);

  HostLoad load() const;
  std::size_t inflight() const { return inflight_.size(); }
  const SessionTypeRegistry& types() const { return types_; }
  const HostScope& scope() const { return scope_; }
  const HostLimits& limits() const { return limits_; }

 private:
  struct Ticket;
  struct Deferred;
  struct Split;

  void dispatch(const std::string& routingId, InboundMessage message);
  // `client`: the sender, clientIdOf its secret (hashed once per request).
  void handleSessionRequest(const std::string& routingId, InboundMessage message, ClientId client);
  void replyVersion(const std::string& routingId, std::uint64_t requestId);
  void replySpaces(const std::string& routingId, std::uint64_t requestId, const std::string& type);
  void addBenchmarks(const std::string& routingId, const InboundMessage& message, ClientId client);
  void startSession(const std::string& routingId, InboundMessage message, ClientId owner);
  void handleWorkerParameter(const std::string& routingId, std::uint64_t requestId,
                             const std::string& key, const std::string& value);
  void runOnStrand(SessionRecord& record, const std::string& routingId, InboundMessage message);
  bool runsInline(const SessionRecord& record) const;
  void startSplit(SessionRecord& record, SplitActions& split, std::uint64_t ticket,
                  InboundMessage message);
  // Moves a split step on from `phase`: keep waiting, go to the pool, or reply.
  void advanceSplit(std::uint64_t ticket, std::unique_ptr<Split> split, SplitPhase phase);
  void resumeSplit(std::uint64_t ticket);
  // Completes inline work iteratively: a completion may dispatch the next
  // waiting request of its strand, which may complete inline again.
  void completeInline(Completion completion);
  // Runs `work` on the executor and sends its Completion back to this host.
  template <class Work>
  void post(const std::string& key, std::uint64_t ticket, Work work);
  const ReadySessionType* findType(const std::string& name) const;
  std::vector<std::string> typeNames() const;
  std::string schedulingKey(const std::string& requested) const;
  void dispatchNext(SessionRecord& record);
  std::uint64_t openTicket(const std::string& routingId, std::uint64_t requestId,
                           std::uint32_t timeoutMs, SessionRecord* record);
  void endSessionsOf(ClientId client);
  template <class Predicate>
  std::size_t retireWhere(Predicate matches);
  void erase(SessionRecord& record);
  void reply(const std::string& routingId, std::uint64_t requestId, const Status& status);
  // The timeout answer of a request past its deadline.
  Status overran(const Ticket& ticket) const;
  // The answer to new work while every thread is held by a stuck task.
  Status refusedWhileStuck() const;

  const SessionTypeRegistry& types_;
  BenchmarkCache& cache_;
  HostLimits limits_;
  const Clock& clock_;
  Executor& executor_;
  ReplySink& replies_;
  Mailbox<Completion>& completions_;
  Logger logger_;
  HostScope scope_;
  RandomIds ids_;
  std::uint64_t nextTicket_ = 1;
  std::uint32_t starting_ = 0;
  std::uint64_t stepsTotal_ = 0;
  std::unordered_map<SessionId, std::unique_ptr<SessionRecord>> sessions_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Ticket>> inflight_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Split>> splitWaits_;  // by ticket
  std::unordered_map<ClientId, TimePoint> leases_;
  ClientIdMemo clientIds_{limits_.passKey};  // who sent the last request (identity.h)
  std::uint32_t waitingRequests_ = 0;
  // Live and starting sessions per client, against the quotas.
  ClientQuotas quotas_;
  std::deque<Completion> inlineDone_;
  bool drainingInline_ = false;
  TimePoint nextLeaseSweep_{};
  DroppedSessions dropped_;
};

}  // namespace kiln
