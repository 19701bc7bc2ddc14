// The coordinator's logic without sockets: the registry of workers, their
// liveness (any message from a worker counts as a heartbeat; silence for
// `liveness` intervals declares it lost and removes its capacity; a message
// that arrives before that cancels the pending loss), cluster listing and
// session placement. The server feeds it messages and the clock's ticks.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/ids.h>
#include <kiln/logging.h>
#include "common/security/zap_authenticator.h"
#include "common/transport/frame.h"
#include "coordinator/experiments.h"
#include "coordinator/placement.h"
#include "coordinator/worker_record.h"

namespace kiln {

struct CoordinatorConfig {
  std::string listen = "tcp://127.0.0.1:7700";
  Duration heartbeatInterval = std::chrono::seconds(1);
  int liveness = 3;                                     // lost after this many silent intervals
  Duration experimentLease = std::chrono::seconds(30);  // a silent experiment closes after this
  // The largest fair-share weight a client may ask for its experiment (a
  // weight takes slots from the other experiments on the same hosts), and
  // how many experiments and workers clients may open.
  ExperimentLimits experiments;
  // A session goes to a worker that ran its benchmark lately (a warm cache)
  // while it has a free slot, or, when every worker is busy, while its load
  // is within this many sessions per slot of the least loaded worker's; 0
  // places by load alone (PlacementIndex::placeNear).
  double cacheAffinitySlack = 1.0;
  FrameLimits frames;
  std::string metricsListen;  // "ADDR:PORT" serves /metrics and the dashboard; empty = off
  ServerSecurity security;    // CURVE on the listening socket when it holds keys
  // The operator's registration token (common/security/worker_token.h): set, only a
  // worker or nesting host that presents it registers. Empty: any peer that
  // passes `security` may (the cluster key is then the only credential; the
  // CLI never leaves a keyless coordinator without a token).
  Secret workerToken;
  // The first worker id (then 1 more per registration); 0: 1 for the core
  // alone, a random start for a CoordinatorServer, so that a restarted
  // coordinator gives no worker an id a dead worker had under its
  // predecessor (clients avoid dead workers by id: Place.avoidWorkers).
  std::uint64_t firstWorkerId = 0;
};

class CoordinatorCore {
 public:
  CoordinatorCore(CoordinatorConfig config, const Clock& clock, Logger logger);

  void handle(const std::string& peer, const InboundMessage& message, std::vector<Outgoing>& out);
  // Pings workers that are due and declares silent ones lost.
  void tick(std::vector<Outgoing>& out);

  const std::map<WorkerId, WorkerRecord>& workers() const { return workers_; }
  const ExperimentBook& experiments() const { return experiments_; }
  std::uint64_t workersLost() const { return workersLost_; }
  std::uint64_t placements() const { return placements_; }  // sessions placed so far
  // Placements that went to a worker that ran the benchmark lately.
  std::uint64_t affinityPlacements() const { return affinityPlacements_; }

 private:
  void handleRequest(const std::string& peer, wire::Envelope::Reader envelope,
                     std::vector<Outgoing>& out);
  void registerWorker(const std::string& peer, std::uint64_t requestId,
                      wire::RegisterWorker::Reader request, std::vector<Outgoing>& out);
  void listCluster(const std::string& peer, std::uint64_t requestId, const std::string& experiment,
                   std::vector<Outgoing>& out);
  void place(const std::string& peer, std::uint64_t requestId, const std::string& sessionType,
             const std::string& benchmark, const std::string& experiment,
             capnp::Data::Reader experimentKey, ClientId client, const AvoidList& avoid,
             std::vector<Outgoing>& out);
  // The placement of a worker the caller names (Place.worker): the caller's
  // pass there; the worker's load is the caller's business.
  void placeNamed(const std::string& peer, std::uint64_t requestId, const std::string& endpoint,
                  ClientId client, std::vector<Outgoing>& out);
  void handleExperimentRequest(const std::string& peer, wire::Envelope::Reader envelope,
                               std::vector<Outgoing>& out);
  // `key`: set only in the answer to openExperiment.
  void replyExperiment(const std::string& peer, std::uint64_t requestId,
                       const ExperimentRecord& experiment, std::vector<Outgoing>& out,
                       const Secret* key = nullptr);
  void writeExperimentView(const ExperimentRecord& experiment, wire::ExperimentView::Builder view);
  void recordHeartbeat(WorkerRecord& worker, wire::Heartbeat::Reader heartbeat,
                       std::vector<Outgoing>& out);
  // Drops the worker's placements that its reports now count, and keeps the
  // placement index in step.
  void prunePlacements(WorkerRecord& worker, TimePoint now);
  // prunePlacements for every worker with a placement that is due to expire.
  void expirePlacements(TimePoint now);
  // The worker's current figures into the placement index (plain workers only).
  void reindex(const WorkerRecord& worker);
  // Removes a lost worker (its capacity, and its experiments' workers);
  // returns the record after it.
  std::map<WorkerId, WorkerRecord>::iterator forgetWorker(WorkerId id);

  CoordinatorConfig config_;
  const Clock& clock_;
  Logger logger_;
  std::uint64_t workersLost_ = 0;
  std::uint64_t placements_ = 0;
  std::uint64_t affinityPlacements_ = 0;
  std::map<WorkerId, WorkerRecord> workers_;
  ExperimentBook experiments_;
  std::uint64_t nextWorkerId_;
  TimePoint nextReconcile_{};
  TimePoint nextScan_{};
  std::unordered_map<std::string, WorkerId> byPeer_;
  std::unordered_map<std::string, WorkerId> byEndpoint_;  // advertised endpoint -> its worker
  PlacementIndex placementIndex_;
  BenchmarkAffinity affinity_;
  // Every placement not yet expired, oldest first: which workers to prune when.
  std::deque<std::pair<TimePoint, WorkerId>> placementLog_;
  // Who asks for placements: only secrets count here (a coordinator issues
  // passes, it takes none).
  ClientIdMemo clientIds_;
};

}  // namespace kiln
