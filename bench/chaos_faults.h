// The faults of `kiln bench chaos --episodes` (the differential harness) and
// the cluster each is injected into, built of real kiln processes on
// loopback. A quiet run and a faulted run use two clusters built alike (the
// same flags, so the same action tables), one started with the fault off:
//   kill         a random worker SIGKILLed, then started again
//   crash        a neighbour's planted LLVM crash (loop-bound-split on a module
//                that makes LLVM 19 segfault) on a random worker: the worker
//                answers it, stops on purpose and is started again, and its
//                other sessions are lost with it
//   coordinator  the coordinator SIGKILLed and started again on its address
//   freeze       a random worker SIGSTOPped for --outage-seconds, then
//                SIGCONTed: silent to everyone, it fences its sessions when it
//                wakes (worker/coordinator_link)
//   partition    a random worker host's cable pulled for --outage-seconds,
//                then put back: every host on a network namespace of its own
//                (scripts/netbed, needs root; tests/support/net_bed.h), the worker
//                running on, cut off, fencing its sessions
//   nest-child   the isolated child process of a `kiln nest --isolate` host
//                that runs the experiment's sessions, SIGKILLed; the host
//                starts it again
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include <kiln/client/client.h>
#include <kiln/status.h>
#include "bench/host_supervisor.h"
#include "tests/support/child_cluster.h"
#include "tests/support/net_bed.h"

namespace kiln::bench {

enum class ChaosFault { kKill, kCrash, kCoordinator, kFreeze, kPartition, kNestChild };

Result<ChaosFault> parseChaosFault(std::string_view name);
std::string_view chaosFaultName(ChaosFault fault);
// What the fault does, for the report.
std::string_view chaosFaultDescription(ChaosFault fault);

struct ChaosClusterOptions {
  unsigned workers = 3;
  unsigned slots = 2;
  double heartbeatSeconds = 0.2;
  double minPauseSeconds = 1.0;  // between faults: uniform in [min, max]
  double maxPauseSeconds = 3.0;
  double outageSeconds = 2.0;  // freeze, partition: how long a host is cut off
  std::uint64_t seed = 1;
  // The client's request timeout, and so each restore's deadline: 0 = the
  // client's default (ClientOptions::requestTimeout), what a user's script has.
  double requestSeconds = 5;
  std::string crasherModule;  // the planted crash's module (crash only)
  std::string crasherAction = "loop-bound-split";
  std::string kiln;  // the kiln binary the hosts run; empty = this process's own
  std::string netbed = "scripts/netbed";  // partition: the bed's script
};

struct FaultFigures {
  std::uint64_t injected = 0;
  std::uint64_t diedOnTheirOwn = 0;
  std::uint64_t restartsAfterCaughtCrash = 0;
  std::string problem;  // the first thing that went wrong with the cluster itself
};

class ChaosCluster {
 public:
  static Result<std::unique_ptr<ChaosCluster>> create(ChaosFault fault,
                                                      const ChaosClusterOptions& options);
  ~ChaosCluster();
  ChaosCluster(const ChaosCluster&) = delete;
  ChaosCluster& operator=(const ChaosCluster&) = delete;

  // A client of the cluster (of its experiment for nest-child), once its
  // hosts are ready.
  Result<std::unique_ptr<client::Client>> connect();
  // Starts supervising the hosts (a host that stops is started again) and,
  // with `inject`, injecting the fault at random pauses.
  void start(bool inject);
  FaultFigures stop();

 private:
  ChaosCluster(ChaosFault fault, ChaosClusterOptions options, testsupport::ChildCluster cluster);
  Status spawnHosts();
  void injectLoop();
  // One fault of the kinds the supervisor does not inject itself.
  Status injectOnce(std::mt19937_64& random);
  Status plantCrash(const RunningProcess& worker);
  Status freeze(int pid);
  Status cutOff(const std::string& label);
  // A host's address to listen on and the command that runs a program on it:
  // bed host `bedHost` (partition), else loopback and nothing.
  std::string listenAddress(unsigned bedHost) const;
  std::vector<std::string> wrapperFor(unsigned bedHost) const;
  Status killNestChild(int hostPid, std::mt19937_64& random);
  // Waits up to `pause`; false when stopping.
  bool pauseFor(std::chrono::milliseconds pause);

  ChaosFault fault_;
  ChaosClusterOptions options_;
  std::unique_ptr<testsupport::NetBed> bed_;  // partition only; outlives cluster_'s children
  testsupport::ChildCluster cluster_;
  std::string coordinatorEndpoint_;
  std::vector<Restartable> hosts_;            // until start() hands them to the supervisor
  std::map<std::string, unsigned> bedHosts_;  // partition: each host's number on the bed
  std::optional<HostSupervisor> supervisor_;
  std::string experimentKey_;  // nest-child: the experiment the sessions belong to
  std::string crasherBytes_;
  std::unique_ptr<client::Client> planter_;  // crash: the neighbour's own client

  std::thread injector_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> injected_{0};
  std::string problem_;  // guarded by mutex_
};

}  // namespace kiln::bench
