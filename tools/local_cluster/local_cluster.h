// A whole single-node cluster for debugging, tests and the client's embedded
// default: a coordinator and N workers, each on its own thread of this
// process or (isolateWorkers) in a child process, talking over real loopback
// TCP exactly as on a cluster.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include <kiln/client/client.h>
#include "coordinator/coordinator_server.h"
#include "tools/local_cluster/worker_child.h"
#include "worker/worker_server.h"

namespace kiln {

struct LocalClusterOptions {
  unsigned workers = 1;
  unsigned nestingHosts = 0;      // hosts for experiments' underlying workers (kiln nest)
  WorkerConfig worker;            // listen/coordinator are filled in
  CoordinatorConfig coordinator;  // listen defaults to any free loopback port
  // Metrics: coordinator.metricsListen serves /metrics and the dashboard;
  // worker.metricsListen gives every worker and host its own /metrics, on
  // any free port of that address when there is more than one of them.
  std::function<void(SessionTypeRegistry&)> registerTypes;  // default: the built-in types
  LogOptions log{spdlog::level::warn, true};
  // The cluster key: CURVE on every socket (one authenticator serves the
  // cluster's shared ZeroMQ context), accepting also `authorizedKeys`.
  std::optional<ClusterKeys> keys;
  std::vector<std::string> authorizedKeys;
  // Each plain worker in a child process of its own, restarted after a
  // crash caught in compile work (tools/local_cluster/worker_child.h): the embedded
  // default of `kiln local`, `kiln eval` and Python. Off, workers are
  // threads of this process (sessionTypes() reaches their contexts).
  bool isolateWorkers = false;
  // The nesting hosts in child processes too (with isolateWorkers or
  // without): each host and the experiments' workers it starts are then
  // processes of their own, as on separate machines (the demo's layouts).
  bool isolateNestingHosts = false;
  // Called with the index of each isolated worker or host (as
  // workerEndpoints()) and its process's pid, for its first process and
  // each restarted one, before it serves: e.g. to give it a CPU budget.
  std::function<void(std::size_t, pid_t)> onWorkerProcess;
  // How long running requests get when the cluster drains (drainAndStop(),
  // an isolated worker's SIGTERM): --drain-seconds.
  Duration drain = std::chrono::seconds(10);
};

class LocalCluster {
 public:
  static Result<std::unique_ptr<LocalCluster>> start(LocalClusterOptions options);
  ~LocalCluster();  // stops everything

  const std::string& coordinatorEndpoint() const { return coordinator_->endpoint(); }
  // Plain workers first, then nesting hosts.
  std::vector<std::string> workerEndpoints() const;
  // 0 where metrics are off; workers in the order of workerEndpoints().
  int coordinatorMetricsPort() const { return coordinator_->metricsPort(); }
  std::vector<int> workerMetricsPorts() const;
  // The session types and contexts of worker `index` (as workerEndpoints()),
  // for whoever runs the cluster in process (its operator, e.g. a test);
  // not for isolated workers (null: theirs live in their processes).
  SessionTypeRegistry* sessionTypes(std::size_t index) { return workers_.at(index).types.get(); }
  // The working directories of the workers and hosts in this process (an
  // isolated worker removes its own, even once this process is gone).
  std::vector<std::filesystem::path> workingDirectories() const;
  // The restarts of isolated workers' processes so far (0 without isolation).
  std::uint64_t workerRestarts() const;
  // Waits until every worker has registered (or the timeout passes).
  Status waitUntilReady(Duration timeout);
  void stop();
  // Stops as `kiln local` does on SIGTERM: every worker and host drains
  // (WorkerServer::drain, for `drain` at most; isolated workers on their
  // SIGTERM), then the coordinator stops.
  void drainAndStop(Duration drain);

 private:
  LocalCluster() : zmq_(1) {}
  struct WorkerSlot {
    std::unique_ptr<SessionTypeRegistry> types;
    std::unique_ptr<WorkerServer> server;
    std::thread thread;
    std::unique_ptr<WorkerChild> child;  // instead of the three above, when isolated
  };
  zmq::context_t zmq_;
  std::unique_ptr<ZapAuthenticator> authenticator_;  // with keys; outlives the servers
  std::optional<ClusterKeys> keys_;
  SteadyClock clock_;
  std::unique_ptr<CoordinatorServer> coordinator_;
  std::thread coordinatorThread_;
  std::vector<WorkerSlot> workers_;
};

// A client on `options.coordinator`, or, when it is empty, on a local cluster
// started for it (the embedded default). The cluster lives as long as the
// returned handle.
struct EmbeddedClient {
  std::unique_ptr<LocalCluster> cluster;  // null when a coordinator was given
  std::unique_ptr<client::Client> client;
};
Result<EmbeddedClient> connectOrStartLocal(client::ClientOptions options,
                                           LocalClusterOptions local = {});

}  // namespace kiln
