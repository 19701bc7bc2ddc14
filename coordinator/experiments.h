// The coordinator's experiments: named tenants whose underlying workers run
// on nesting hosts. Desired state (the specs) is reconciled against what the
// hosts report in their heartbeats, level-triggered: missing workers are
// planned (experiment_plan.h) and created with createWorker down the host's
// link, creates that no heartbeat confirmed are repeated (hosts treat them
// idempotently), workers on lost hosts are planned again elsewhere, workers
// that no experiment wants are released after a grace period (so that a
// restarted coordinator can adopt them when their experiment re-opens), and
// experiments whose client went silent for the lease are closed.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/logging.h>
#include <kiln/status.h>
#include "common/security/identity.h"
#include "common/types/underlying_wire.h"
#include "coordinator/experiment_plan.h"
#include "coordinator/worker_record.h"

namespace kiln {

struct ExperimentWorkerState {
  WorkerId host;
  bool ready = false;  // a heartbeat of its host listed it
  LoadFigures load;
  TimePoint createSent{};
  std::deque<TimePoint> placements;  // recent, not yet in a load report
};

struct ExperimentRecord {
  ExperimentSpec spec;
  ClientId owner;  // who opened it: its experiments count against its quota
  std::string
      keyDigest;  // of the key issued at open (common/security/identity.h); the key is not kept
  TimePoint lastHeard;
  std::map<std::uint64_t, ExperimentWorkerState> workers;  // by underlying worker id
  std::string problem;                                     // why workers are missing, if they are
  SampleRing utilization;

  // Its pass on `host` (common/security/identity.h), which createWorker gives the host.
  std::string passOn(const WorkerRecord& host) const;
  // Whether `status`, as `host` reported it, is a worker made for this very
  // experiment: its name and its pass for that host.
  bool owns(const UnderlyingStatus& status, const WorkerRecord& host) const;
};

struct ExperimentPlacement {
  WorkerId host;
  std::string endpoint;
  std::uint64_t target = 0;
};

using HostTable = std::map<WorkerId, WorkerRecord>;

// The operator's bounds on experiments (kiln coordinator flags): each one
// costs nesting hosts a child process and its underlying workers.
struct ExperimentLimits {
  std::uint32_t maxWeight = 10;       // --max-experiment-weight
  std::uint32_t maxPerClient = 4;     // --max-experiments-per-client
  std::uint32_t maxExperiments = 64;  // --max-experiments, every client's together
  std::uint32_t maxWorkers = 64;      // --max-experiment-workers: of one experiment
};

class ExperimentBook {
 public:
  ExperimentBook(const Clock& clock, Logger logger, Duration heartbeatInterval, Duration lease,
                 ExperimentLimits limits = {});

  // Creates the experiment, or updates its spec (e.g. more workers) for a
  // caller that presents its key. A new experiment is issued a fresh key,
  // or takes the presented one: a client re-opening what a restarted
  // coordinator forgot keeps its key, and the hosts' workers that carry its
  // digest are adopted again. A new experiment counts against `owner`'s
  // quota. Returns the key (the caller's to hand out).
  Result<Secret> open(ExperimentSpec spec, capnp::Data::Reader presentedKey = {},
                      ClientId owner = {});
  // ok if `name` is open and `key` is its key; not-found or permission-denied.
  Status authorize(const std::string& name, capnp::Data::Reader key) const;
  Status close(const std::string& name, const HostTable& hosts, std::vector<Outgoing>& out);
  void touch(const std::string& name);
  const ExperimentRecord* find(const std::string& name) const;
  const std::map<std::string, ExperimentRecord>& experiments() const { return experiments_; }

  // A nesting host's heartbeat: mark its workers ready, adopt or release others.
  void onHostReport(const WorkerRecord& host, std::vector<Outgoing>& out);
  void onHostLost(WorkerId host);
  // Plans, repeats creates, rebalances, expires; call every interval.
  void reconcile(const HostTable& hosts, std::vector<Outgoing>& out);
  // Samples each experiment's utilization (busy share of its hosts' slots).
  void sampleUtilization(const HostTable& hosts);
  // The least loaded ready worker of `name` that serves `sessionType`.
  // Hosts the client saw die (`avoid`) are skipped.
  Result<ExperimentPlacement> place(const std::string& name, const std::string& sessionType,
                                    const HostTable& hosts, const AvoidList& avoid = {});

 private:
  void sendCreate(const WorkerRecord& host, const ExperimentRecord& experiment,
                  std::uint64_t workerId, std::vector<Outgoing>& out);
  void sendRelease(const WorkerRecord& host, std::uint64_t workerId, std::vector<Outgoing>& out);
  std::vector<NestingHostView> hostViews(const HostTable& hosts) const;
  std::vector<AssignedWorker> assigned(const ExperimentRecord& experiment) const;
  void adoptReported(ExperimentRecord& record, const HostTable& hosts);

  const Clock& clock_;
  Logger logger_;
  Duration interval_;
  Duration lease_;
  // A new experiment `owner` may not open, and why; ok if it may.
  Status checkQuota(const std::string& name, ClientId owner) const;

  ExperimentLimits limits_;  // the operator's (CoordinatorConfig)
  std::uint64_t nextRequestId_ = 1;
  RandomIds ids_;
  std::map<std::string, ExperimentRecord> experiments_;
  std::map<std::uint64_t, TimePoint> strays_;  // reported, unwanted: first seen
};

}  // namespace kiln
