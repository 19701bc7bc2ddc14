// What a worker process's poll loop drives: the request handling behind its
// ROUTER socket. A plain worker has one SessionHost (SingleHostFrontend); a
// nesting host (nesting/) has one per underlying worker. Both share the
// process's parts: session types and their contexts, benchmark cache, pool.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <kiln/frame_limits.h>
#include "worker/coordinator_link.h"
#include "worker/session_host.h"
#include "worker/task_pool.h"

namespace kiln {

// Replies to requests that came down the coordinator link are sent to this
// routing id. ZeroMQ's own ids are 5 bytes and start with a zero byte, and
// peers cannot choose ids that start with one, so no client can collide.
inline const std::string kCoordinatorRoute("\0coordinator", 12);

struct FrontendParts {
  // Not const: an isolated child runs its copy of the contexts' shutdown().
  SessionTypeRegistry& types;
  BenchmarkCache& cache;
  HostLimits limits;
  const Clock& clock;
  TaskPool& pool;
  ReplySink& replies;
  Mailbox<Completion>& completions;
  Logger logger;
  // The process's working directory (ServiceContext::makeSessionDirectory).
  std::filesystem::path workingDirectory;
  // The operator's (--max-message-bytes): what an isolating nesting host and
  // its children read of each other (nesting/isolation_messages.h).
  FrameLimits frames;
};

class WorkerFrontend {
 public:
  virtual ~WorkerFrontend() = default;
  virtual void handle(const std::string& routingId, InboundMessage message) = 0;
  virtual void onCompletion(Completion completion) = 0;
  // Deadlines, leases and deferred work; called after every poll.
  virtual void tick() = 0;
  virtual LoadReport load() const = 0;
  // Ends every session (shutdown); call when no task runs.
  virtual void clear() = 0;
  // A clean stop, before clear(): processes of the frontend's own (an
  // isolating nesting host's children) are asked to stop, answer what they
  // run and shut their contexts down, and are waited for up to about
  // `within` (what is left of --drain-seconds).
  virtual void stopCleanly(Duration within) {}
  // A frontend with a socket of its own (an isolating host's link to its
  // child processes) has the poll loop watch it.
  virtual zmq::socket_t* socket() { return nullptr; }
  virtual void onSocketReadable() {}
  // Steps waiting for their compiler in the poll loop (HostLimits::loopWaits):
  // the loop polls each fd and calls onWaitReady() when it is readable or hung up.
  virtual void appendWaits(std::vector<LoopWait>& out) const {}
  virtual void onWaitReady(const LoopWait& wait) {}
  // SessionHost::dropSessionsOfClientsSilentSince over the frontend's hosts
  // (a nesting host's underlying workers, in its process or in its child
  // processes); how many sessions it ended in this process.
  virtual std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) = 0;
};

// Runs tasks on the process's pool under one scheduling key policy.
class PoolExecutor final : public Executor {
 public:
  explicit PoolExecutor(TaskPool& pool) : pool_(pool) {}
  void post(const std::string& key, UniqueTask task) override { pool_.post(key, std::move(task)); }
  bool idle() const override { return pool_.idle(); }
  std::string stuckNote() const override { return describeStuck(pool_); }
  bool acceptsWork() const override { return pool_.heldByStuck() < pool_.threads(); }

 private:
  TaskPool& pool_;
};

// How a worker process serves: its queue discipline and its frontend.
struct ServingMode {
  bool nesting = false;
  std::function<std::unique_ptr<TaskQueue>()> makeQueue;
  std::function<std::unique_ptr<WorkerFrontend>(const FrontendParts&)> makeFrontend;
};

// A plain worker: FIFO pool, one SessionHost for every client.
ServingMode plainWorkerMode();

}  // namespace kiln
