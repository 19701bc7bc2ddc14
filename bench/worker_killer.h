// The chaos of `kiln bench chaos` and `kiln bench soak`: a thread that
// SIGKILLs a random process of a set (workers, nesting hosts) at random
// intervals and starts its replacement with the same arguments at once, as
// a supervisor would. The victim is retired from the cluster (reaped, its
// output files removed), so a long run does not accumulate dead children.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/child_cluster.h"

namespace kiln::bench {

// One process the killer may kill, and how to start it again.
struct Restartable {
  std::string label;                // "worker-0", "nest": stays with the replacements
  std::vector<std::string> args;    // `kiln` arguments of it and of its replacements
  ChildProcess* running = nullptr;  // owned by the cluster; null while down
};

struct KillPacing {
  double minSeconds = 1.0;  // between kills: uniform in [min, max]
  double maxSeconds = 3.0;
  std::uint64_t seed = 1;
};

// What runs under a label right now.
struct RunningProcess {
  std::string label;
  int pid = 0;  // 0: down (its replacement failed to start)
};

class WorkerKiller {
 public:
  // The killer owns `targets` (and their replacements) from now until stop().
  WorkerKiller(ChildCluster& cluster, std::vector<Restartable> targets, KillPacing pacing);
  ~WorkerKiller() { stop(); }
  WorkerKiller(const WorkerKiller&) = delete;
  WorkerKiller& operator=(const WorkerKiller&) = delete;

  void stop();
  std::uint64_t kills() const { return kills_.load(); }
  // The first replacement that failed to start, empty if none.
  std::string problem() const;
  // Safe from any thread while the killer runs.
  std::vector<RunningProcess> running() const;

 private:
  void run();

  ChildCluster& cluster_;
  std::vector<Restartable> targets_;  // written under mutex_ by the killer thread only
  KillPacing pacing_;
  std::mt19937_64 random_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> kills_{0};
  std::string problem_;
  std::thread thread_;
};

}  // namespace kiln::bench
