// A plain worker of a local cluster in a child process of its own (forked,
// no exec: it works the same from `kiln` and from a Python process), so
// that compile work that crashes costs a restart and not the run. LLVM's
// crash recovery catches a segfault inside a pass, but the thread it
// interrupted may have held LLVM's global locks or left its heap broken: a
// worker in the process of the debugging run then hangs or lies on later
// steps. Here the child exits (WorkerConfig::exitWhenDamaged), a fresh one
// is forked and registers with the coordinator, and clients restore its
// sessions by replay, exactly as on a cluster.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kiln/curve_keys.h>
#include <kiln/kit/session_types.h>
#include <kiln/logging.h>
#include "worker/worker_server.h"

namespace kiln {

struct WorkerChildSetup {
  WorkerConfig config;  // listen and coordinator filled in; security from `keys`
  std::function<void(SessionTypeRegistry&)> registerTypes;  // null: the built-in types
  LogOptions log;
  std::string name;  // the logger's
  std::optional<ClusterKeys> keys;
  std::vector<std::string> authorizedKeys;
  // How long the child's running requests get when it is stopped (SIGTERM,
  // sent by the destructor or on the parent's death): --drain-seconds.
  Duration drain = std::chrono::seconds(10);
  // Called in this process with each child's pid (the first and every
  // restarted one) right after its fork, before it serves: e.g. to put it
  // into a CPU budget, which the threads and children it makes inherit.
  std::function<void(pid_t)> onProcessStarted;
};

class WorkerChild {
 public:
  // Forks the first child and waits until it serves.
  static Result<std::unique_ptr<WorkerChild>> start(WorkerChildSetup setup);
  // Stops restarting and stops the child: SIGTERM, so that it drains and
  // removes its working directory; killed if it outlasts its bound.
  ~WorkerChild();
  WorkerChild(const WorkerChild&) = delete;
  WorkerChild& operator=(const WorkerChild&) = delete;

  // The serving child's; a restarted child has a new endpoint.
  std::string endpoint() const;
  int metricsPort() const;
  pid_t pid() const;
  // Children started after the first (each after its predecessor exited).
  std::uint64_t restarts() const { return restarts_.load(); }

 private:
  explicit WorkerChild(WorkerChildSetup setup) : setup_(std::move(setup)) {}
  struct Serving {
    pid_t pid = -1;
    std::string endpoint;
    int metricsPort = 0;
    std::filesystem::path workingDirectory;  // the child's (removed after it)
  };
  // Forks a child and reads where it serves.
  Result<Serving> spawn();
  // The supervisor's loop: waits for the child, forks the next one.
  void supervise();
  void supervisePids();
  // Removes what an ended child may have left (its working directory).
  static void forget(const Serving& ended);

  WorkerChildSetup setup_;
  mutable std::mutex mutex_;
  Serving serving_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> restarts_{0};
  std::atomic<bool> supervisorDone_{false};
  std::thread supervisor_;
};

}  // namespace kiln
