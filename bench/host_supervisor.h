// The supervisor of the hosts of `kiln bench chaos` and `kiln bench soak`, as
// systemd or Kubernetes would be: it starts again at once every host that
// exits by itself (a host that caught a crash inside compile work stops on
// purpose, exit_codes.h), and, for chaos, SIGKILLs a random killable host at
// random intervals and starts its replacement with the same arguments. A
// dead host is retired from the cluster (reaped, its output files removed),
// so a long run does not accumulate dead children.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/child_cluster.h"

namespace kiln::bench {

// One process the supervisor watches, and how to start it again.
struct Restartable {
  std::string label;                             // "worker-0", "nest": stays with the replacements
  std::vector<std::string> args;                 // `kiln` arguments of it and of its replacements
  std::vector<std::string> wrapper;              // runs it on its host (ChildCluster::spawn)
  testsupport::ChildProcess* running = nullptr;  // owned by the cluster; null while down
  bool killable = true;                          // a target of the random kills
};

struct KillPacing {
  double minSeconds = 1.0;  // between kills: uniform in [min, max]
  double maxSeconds = 3.0;
  std::uint64_t seed = 1;
  bool enabled = true;  // false: supervise only
};

// What runs under a label right now.
struct RunningProcess {
  std::string label;
  int pid = 0;           // 0: down (its replacement failed to start)
  std::string endpoint;  // where it listens; empty while down
};

class HostSupervisor {
 public:
  // The supervisor owns `hosts` (and their replacements) from now until stop().
  HostSupervisor(testsupport::ChildCluster& cluster, std::vector<Restartable> hosts,
                 KillPacing pacing);
  ~HostSupervisor() { stop(); }
  HostSupervisor(const HostSupervisor&) = delete;
  HostSupervisor& operator=(const HostSupervisor&) = delete;

  void stop();
  std::uint64_t kills() const { return kills_.load(); }
  // Hosts that stopped after catching a crash (kExitRestartAfterCaughtCrash).
  std::uint64_t restartsAfterCaughtCrash() const { return damageRestarts_.load(); }
  // Hosts that died by themselves any other way (a crash no one caught).
  std::uint64_t unexpectedDeaths() const { return deaths_.load(); }
  // The first replacement that failed to start or unexpected death, empty if none.
  std::string problem() const;
  // Safe from any thread while the supervisor runs.
  std::vector<RunningProcess> running() const;

 private:
  void run();
  // Retires `host`'s process (killing it first when `kill`) and starts its
  // replacement; called with the lock held, which it drops meanwhile.
  void replace(Restartable& host, bool kill, std::unique_lock<std::mutex>& lock);
  // Replaces every host that exited by itself; lock held.
  void restartExited(std::unique_lock<std::mutex>& lock);

  testsupport::ChildCluster& cluster_;
  std::vector<Restartable> hosts_;  // written under mutex_ by the supervisor thread only
  KillPacing pacing_;
  std::mt19937_64 random_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> kills_{0};
  std::atomic<std::uint64_t> damageRestarts_{0};
  std::atomic<std::uint64_t> deaths_{0};
  std::string problem_;
  std::thread thread_;
};

}  // namespace kiln::bench
