// The hosts of `kiln bench coordinator`: many simulated workers and nesting
// hosts in this process, each speaking the real protocol to a real
// coordinator over its own socket (worker/coordinator_link.h: registration,
// heartbeats with load, re-registration after a coordinator restart; a
// nesting host also answers createWorker/releaseWorker). They host no
// sessions: the bench tells a host when one of "its" sessions starts or
// ends, and the host reports that count as a real one would.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/secret.h>
#include <kiln/status.h>

namespace kiln::bench {

struct FleetOptions {
  unsigned hosts = 100;
  unsigned nestingHosts = 0;  // the last ones are nesting hosts
  unsigned slots = 8;         // per host
  Duration heartbeatInterval = std::chrono::seconds(1);
  int liveness = 3;
  unsigned threads = 2;  // the hosts are split over this many poll loops
  Secret token;          // the operator's registration token they present
};

class SimulatedFleet {
 public:
  static Result<std::unique_ptr<SimulatedFleet>> start(zmq::context_t& zmq,
                                                       const std::string& coordinator,
                                                       const FleetOptions& options);
  ~SimulatedFleet();
  SimulatedFleet(const SimulatedFleet&) = delete;
  SimulatedFleet& operator=(const SimulatedFleet&) = delete;

  // The host that advertised `endpoint`, or -1.
  int hostOf(const std::string& endpoint) const;
  std::string endpointOf(unsigned host) const;
  // A session placed on `host` (on its underlying worker `target`, 0 = the
  // host itself) starts or ends; the next heartbeat reports it.
  void sessionStarted(unsigned host, std::uint64_t target);
  void sessionEnded(unsigned host, std::uint64_t target);
  // The host stops answering and heartbeating, as if its machine vanished.
  void silence(unsigned host);
  // Hosts registered right now, and registrations so far (re-registrations too).
  unsigned registered() const;
  std::uint64_t registrations() const;
  // Each host's registrations so far; -1 for a silenced host.
  std::vector<int> registrationsByHost() const;
  // Sessions the hosts that are not silenced report, summed.
  std::uint64_t liveSessions() const;

 private:
  struct Host;
  struct Loop;
  explicit SimulatedFleet(const FleetOptions& options);
  void run(Loop& loop);

  FleetOptions options_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::unordered_map<std::string, unsigned> byEndpoint_;
  std::atomic<bool> stopping_{false};
  SteadyClock clock_;
};

}  // namespace kiln::bench
