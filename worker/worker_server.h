// A worker process's server: one poll loop thread owns the client-facing
// ROUTER socket and the coordinator link; compile work runs on a TaskPool
// sized to the slots and comes back through a Mailbox. Everything the
// sessions share (working directory, benchmark cache, contexts) lives here.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/kit/benchmark_cache.h>
#include <kiln/kit/operator_settings.h>
#include <kiln/kit/session_types.h>
#include <kiln/logging.h>
#include "common/base/mailbox.h"
#include "common/process/working_directory.h"
#include "common/security/zap_authenticator.h"
#include "common/transport/frame.h"
#include "worker/coordinator_link.h"
#include "worker/direct_channels.h"
#include "worker/frontend.h"
#include "worker/session_host.h"
#include "worker/task_pool.h"
#include "worker/worker_metrics.h"

namespace kiln {

inline constexpr const char* kAutoLocalListen = "auto";

struct WorkerConfig {
  std::string listen = "tcp://127.0.0.1:0";  // port 0 = any free port
  std::string advertise;                     // endpoint given to clients; empty = bound one
  std::string coordinator;                   // empty = standalone (clients connect directly)
  // Shown to the coordinator to be registered (--worker-token-file,
  // common/security/worker_token.h); empty = none, for a coordinator that asks none.
  Secret registrationToken;
  // Set: the token is read from this file again before each registration
  // (one missing or malformed then counts as none).
  std::filesystem::path registrationTokenFile;
  unsigned slots = 2;
  HostLimits limits;
  LinkTiming link;
  std::uint64_t cacheBytes = 256u << 20;
  EvictionPolicy evictionPolicy = EvictionPolicy::kLeastRecentlyUsed;
  std::filesystem::path workingDirectoryBase;  // empty = system temp dir
  // Directories below which files that clients name (file:// benchmarks)
  // may be read: absolute (parseAllowFiles in include/kiln/file_access.h); an
  // empty list allows none. nullopt = the default: the current directory
  // when every endpoint that takes requests stays on this host, else none.
  std::optional<std::vector<std::filesystem::path>> allowFiles;
  FrameLimits frames;
  ServingMode mode = plainWorkerMode();  // nesting/ provides the nesting host's
  // A pool thread busy this long is presumed stuck and replaced (its task
  // ignored cancel()), at most `slots` of them still running at a time;
  // zero = the longest deadline plus 5 s.
  Duration stuckTaskAfter{};
  // The operator's decisions for the session types' contexts.
  OperatorSettings settings;
  std::string metricsListen;  // "ADDR:PORT" serves /metrics; empty = off
  // CURVE on the client socket and the coordinator link when it holds keys.
  ServerSecurity security;
  // A second endpoint for clients on this host (common/transport/local_transport.h):
  // kAutoLocalListen = an abstract ipc:// name when `listen` is TCP; empty = none.
  std::string localListen = kAutoLocalListen;
  // After a context reports damage (ServiceContext::damage(), e.g. a crash
  // caught inside LLVM), stop: answer the requests already running, then
  // leave run() so that the process exits to be restarted (see damage()).
  // Only for a process that is this worker alone (`kiln worker`, `kiln
  // nest`); off, a damaged worker logs a warning and keeps serving (the
  // in-process cluster has nothing to restart it into).
  bool exitWhenDamaged = false;
  // Direct channels for clients on other hosts (worker/direct_channels.h):
  // a TCP listener on the interface of `listen`, on clusters without a key.
  DirectTcp directTcp;
  // After replying on a same-host direct channel, poll this long before
  // sleeping, while the client answers that soon (worker/reply_spin.h);
  // zero = sleep at once.
  Duration replySpin = std::chrono::microseconds(50);
};

class WorkerServer {
 public:
  // Binds, creates the working directory and starts every session type's
  // context. The registry must outlive the server.
  static Result<std::unique_ptr<WorkerServer>> create(WorkerConfig config,
                                                      SessionTypeRegistry& types,
                                                      zmq::context_t& zmq, const Clock& clock,
                                                      Logger logger);
  ~WorkerServer();

  const std::string& endpoint() const { return endpoint_; }
  // The bound same-host endpoint (ipc://); empty when none.
  const std::string& localEndpoint() const { return localEndpoint_; }
  const std::filesystem::path& workingDirectory() const { return workingDirectory_->path(); }
  BenchmarkCache& benchmarkCache() { return cache_; }
  // The port /metrics is served on; 0 when metrics are off.
  int metricsPort() const { return observe_ ? observe_->port() : 0; }

  // Serves until stop(); then ends every session and shuts the contexts down.
  void run();
  // Thread-safe; run() returns soon after.
  void stop();
  // Thread-safe: stop gently (SIGTERM). From now on every request is
  // refused as 'disconnected' (its client restores the session elsewhere)
  // and the coordinator hears nothing more (it declares this worker lost
  // and places nothing here); run() returns, as after stop(), once no
  // request runs, or `within` after the loop saw this, whichever is first.
  void drain(Duration within);
  // Why run() stopped on its own (WorkerConfig::exitWhenDamaged); nullopt
  // when it was stopped or is still serving. After such a stop the server
  // has answered what ran and removed its working directory, and nothing
  // else may be cleaned up: the process must close its ZeroMQ context (to
  // send the last answers) and _exit(kExitRestartAfterCaughtCrash) without
  // running destructors, which would walk structures the crash may have
  // broken. A watchdog ends the process within seconds if that hangs.
  const std::optional<std::string>& damage() const { return damage_; }

 private:
  class RouterSink;
  WorkerServer(WorkerConfig config, SessionTypeRegistry& types, zmq::context_t& zmq,
               const Clock& clock, Logger logger);
  void readClients();
  // Every request, from ZeroMQ or a direct channel, goes to the frontend
  // through here; OpenDirect is answered by the server itself.
  void deliver(const std::string& route, InboundMessage message);
  void answerOpenDirect(const std::string& route, std::uint64_t requestId, bool acrossHosts);
  Status bindLocalEndpoint();
  void listenForDirectChannels();
  void shutdown();
  void refuseWhileDraining(const std::string& route, const InboundMessage& message);
  // Starts the drain the first time drain() was seen; true when run() may
  // stop. `stepsWaiting`: steps wait for their compiler in the loop.
  bool drained(const LoadReport& load, bool stepsWaiting);
  void returnFreedMemory(std::uint32_t liveSessions);
  // Checks the contexts after finished requests; true when run() must stop.
  bool stopForDamage();
  // The end of run() after damage (see damage()).
  void finishDamaged();
  // Logs what TaskPool::replaceStuck() did.
  void reportStuck(const StuckThreads& stuck);
  // Cut off from its coordinator (CoordinatorLink::cutOffSince): the
  // sessions of clients silent since then are being restored elsewhere, so
  // their copies here go before a late request could step them.
  void dropSessionsIfCutOff();

  WorkerConfig config_;
  SessionTypeRegistry& types_;
  zmq::context_t& zmq_;
  const Clock& clock_;
  std::optional<TimePoint> droppedForCutOffAt_;
  Logger logger_;
  std::optional<WorkingDirectory> workingDirectory_;
  BenchmarkCache cache_;
  std::unique_ptr<ContextResources> resources_;
  zmq::socket_t router_;
  std::uint64_t routerUses_ = 0;  // sends and reads (ReadinessPoll's kUntouched)
  std::string endpoint_;
  std::string localEndpoint_;
  Mailbox<Completion> completions_;
  std::unique_ptr<TaskPool> pool_;
  std::unique_ptr<DirectChannels> direct_;  // null: none offered
  std::unique_ptr<RouterSink> sink_;
  std::unique_ptr<WorkerFrontend> frontend_;
  std::unique_ptr<CoordinatorLink> link_;
  std::unique_ptr<WorkerObservability> observe_;  // null unless metricsListen is set
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> drainWithinMs_{-1};  // -1: serving, no drain asked
  std::optional<TimePoint> drainUntil_;          // the loop's: once the drain began
  std::uint64_t delivered_ = 0;                  // requests handed to deliver()
  std::uint64_t deliveredAtDrainCheck_ = 0;
  bool shutDown_ = false;
  std::optional<std::string> damage_;
  bool damageWarned_ = false;
  Duration stuckAfter_{};
  bool stuckReported_ = false;  // the error that slots are held was logged
  std::uint32_t peakSessions_ = 0;
};

}  // namespace kiln
