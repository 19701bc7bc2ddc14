// `kiln bench coordinator`: one real coordinator process and many simulated
// hosts (bench/simulated_fleet.h) speaking the real protocol over real
// sockets, some of them nesting hosts with experiments opened and closed on
// them, and placers asking for sessions. For each host count it reports
// placement latency, the coordinator's CPU (share of one core) with only
// heartbeats and under placements, its RSS, `kiln status` latency, how soon
// a silent host is declared lost, and a coordinator restart: how soon every
// host is registered again and placement works, and whether the hosts'
// sessions are all still counted.
#pragma once

#include <vector>

#include <kiln/clock.h>
#include <kiln/secret.h>
#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct CoordinatorBenchOptions {
  std::vector<unsigned> hostCounts = {100, 300, 1000, 3000};
  unsigned sessionsPerHost = 100;    // placed at each host count (100,000 at 1,000 hosts)
  unsigned maxSessions = 100000;     // at most this many placed at one host count
  double endShare = 0.25;            // of the placed sessions, this share ends again
  double nestingShare = 0.1;         // of the hosts
  unsigned experiments = 4;          // opened, used and closed during the placements
  unsigned experimentWorkers = 8;    // underlying workers each
  unsigned placers = 4;              // concurrent placement clients, one request in flight each
  double placementRate = 5000;       // per second, all placers together: the latency figures
  unsigned burstPlacements = 20000;  // then placed unpaced: the most per second
  unsigned slots = 8;                // per host
  double idleSeconds = 5;            // heartbeats only: the coordinator's steady cost
  Duration heartbeatInterval = std::chrono::seconds(1);
  int liveness = 3;
  unsigned lostHosts = 5;  // silenced to time how soon they are declared lost
  unsigned statusSamples = 10;
  bool restart = true;
  bool pinned = false;  // every process and thread of the run on CPU 0
  unsigned fleetThreads = 2;
  double maxSecondsPerCount = 300;  // a bound on each host count's run
  // Set by the bench itself: the registration token its coordinators ask of
  // the simulated hosts (common/security/worker_token.h), and the file it is in.
  std::string workerTokenFile;
  Secret workerToken;
};

Result<Report> runCoordinatorBench(const CoordinatorBenchOptions& options);

}  // namespace kiln::bench
