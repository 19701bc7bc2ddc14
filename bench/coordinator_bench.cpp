#include "bench/coordinator_bench.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <kiln/client/client.h>
#include "bench/kiln_executable.h"
#include "bench/placement_probe.h"
#include "bench/simulated_fleet.h"
#include "common/base/cpu_time.h"
#include "common/process/working_directory.h"
#include "common/security/worker_token.h"
#include "common/transport/frame.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

double secondsSince(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

// Polls `ready` every 10 ms until it holds or `limit` passes; the seconds it
// took, or a timeout naming `what`.
template <class Ready>
Result<double> waitFor(Ready ready, Duration limit, const std::string& what) {
  const auto start = Steady::now();
  while (!ready()) {
    if (Steady::now() - start > limit) {
      return timeoutError(fmt::format("{} did not happen within {:.0f} s", what,
                                      std::chrono::duration<double>(limit).count()));
    }
    std::this_thread::sleep_for(10ms);
  }
  return secondsSince(start);
}

// Every figure of one host count.
struct CountFigures {
  unsigned hosts = 0;
  double registerSeconds = 0;
  double idleCpuShare = 0;
  double heartbeatCpuMicros = 0;  // coordinator CPU per heartbeat it takes in (and ping it sends)
  std::uint64_t placed = 0;
  std::uint64_t placementErrors = 0;
  LatencySummary placement;
  double placementMaxUs = 0;
  double pacedPerSecond = 0;       // achieved at the offered rate
  double placementsPerSecond = 0;  // unpaced: as fast as the placers go
  double placingCpuShare = 0;      // at the offered rate
  double burstCpuShare = 0;        // unpaced
  LatencySummary burstPlacement;
  LatencySummary floor;       // a raw ZeroMQ echo of the same size, paced alike
  LatencySummary burstFloor;  // the same, unpaced
  LatencySummary experimentPlacement;
  double experimentReadyMaxSeconds = 0;
  double rssMiB = 0;
  double statusP50Ms = 0, statusMaxMs = 0;
  double lostNoticedMedianSeconds = 0, lostNoticedMaxSeconds = 0;
  double restartReregisterSeconds = 0;
  double restartFirstPlacementSeconds = 0;
  std::int64_t restartSessionsLost = 0;  // hosts' sessions the new coordinator does not count
  std::uint64_t duplicateAnswers = 0;
};

struct CoordinatorProcess {
  testsupport::ChildProcess* child = nullptr;
  std::string endpoint;
  pid_t pid() const { return child->process.pid(); }
};

Result<CoordinatorProcess> spawnCoordinator(testsupport::ChildCluster& cluster,
                                            const std::string& listen,
                                            const CoordinatorBenchOptions& o) {
  // Logging at info, as a user runs it: its cost is part of the figures.
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * child,
      cluster.spawn({"coordinator", "--listen", listen, "--heartbeat-seconds",
                     fmt::format("{}", std::chrono::duration<double>(o.heartbeatInterval).count()),
                     "--liveness", std::to_string(o.liveness), "--log-level", "info",
                     // One operator client opens every experiment, and each its workers.
                     "--max-experiments-per-client", std::to_string(std::max(1u, o.experiments)),
                     "--max-experiment-workers",
                     std::to_string(std::clamp(o.experimentWorkers, 1u, 4096u)),
                     "--worker-token-file", o.workerTokenFile}));
  return CoordinatorProcess{child, child->endpoint};
}

// A client of the operator (no experiment): status, experiments.
Result<std::unique_ptr<client::Client>> operatorClient(const std::string& coordinator) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 30s;
  return client::Client::connect(options);
}

// Sessions placed by one placer that it may end again.
struct PlacerResult {
  std::vector<std::int64_t> nanos;
  std::uint64_t errors = 0;
  std::uint64_t duplicates = 0;
  std::string firstError;
};

// Requests due one every `period` (zero: as soon as the last is answered).
// A request that is due while the previous one is still waiting counts the
// wait from when it was due, so that a server falling behind shows as
// latency; the pacer's own late wake-ups are the machine's, not counted.
class Pacer {
 public:
  Pacer(Duration period, unsigned phase)
      : period_(period), due_(Steady::now() + period * (phase % 16) / 16) {}
  // Waits until the next request is due; the nanoseconds it was held up.
  std::int64_t next() {
    if (period_ <= Duration::zero()) return 0;
    std::int64_t late = 0;
    if (lastAnswer_ > due_) {
      late = std::chrono::duration_cast<std::chrono::nanoseconds>(lastAnswer_ - due_).count();
    } else {
      std::this_thread::sleep_until(due_);
    }
    due_ += period_;
    return late;
  }
  void answered() { lastAnswer_ = Steady::now(); }

 private:
  Duration period_;
  Steady::time_point due_;
  Steady::time_point lastAnswer_{};
};

// Places sessions until `remaining` runs out or `deadline`, one every
// `period` (zero: as fast as answers come); ends one of its own (a random
// one) every 1/endShare placements.
PlacerResult runPlacer(zmq::context_t& zmq, const std::string& coordinator, SimulatedFleet& fleet,
                       std::atomic<std::int64_t>& remaining, Duration period, double endShare,
                       unsigned seed, Steady::time_point deadline) {
  PlacerResult result;
  PlacementProbe probe(zmq, coordinator);
  std::mt19937 random(seed);
  std::vector<unsigned> mine;
  const unsigned endEvery = endShare > 0 ? std::max(1u, unsigned(1.0 / endShare)) : 0;
  Pacer pacer(period, seed);  // placers start out of phase: no bursts
  while (remaining.fetch_sub(1) > 0 && Steady::now() < deadline) {
    const std::int64_t late = pacer.next();
    auto placed = probe.place("llvm", 5s);
    pacer.answered();
    if (!placed.ok()) {
      if (result.errors++ == 0) result.firstError = placed.status().toString();
      continue;
    }
    result.nanos.push_back(late + placed->nanos);
    int host = fleet.hostOf(placed->endpoint);
    if (host < 0) continue;
    fleet.sessionStarted(static_cast<unsigned>(host), 0);
    mine.push_back(static_cast<unsigned>(host));
    if (endEvery != 0 && result.nanos.size() % endEvery == 0) {
      std::size_t pick = random() % mine.size();
      fleet.sessionEnded(mine[pick], 0);
      mine[pick] = mine.back();
      mine.pop_back();
    }
  }
  result.duplicates = probe.duplicateAnswers();
  return result;
}

// The floor of a placement's path, measured like it in the same run: the
// same number of clients, each with one request in flight on its own DEALER,
// paced alike, sending a frame of a placement request's size to a raw
// ZeroMQ echo process (`kiln bench zmq-echo`) and waiting for it back.
Result<LatencySummary> measureFloor(zmq::context_t& zmq, const std::string& echo,
                                    const CoordinatorBenchOptions& o, std::uint64_t count,
                                    double rate) {
  capnp::MallocMessageBuilder builder(256);
  auto envelope = initEnvelope(builder, 1);
  envelope.setTimeoutMs(5000);
  envelope.initRequest().initPlace().setSessionType("llvm");
  const zmq::message_t request = encodeFrame(builder);
  const Duration period =
      rate > 0
          ? std::chrono::duration_cast<Duration>(std::chrono::duration<double>(o.placers / rate))
          : Duration::zero();
  std::atomic<std::int64_t> remaining{static_cast<std::int64_t>(count)};
  std::vector<std::vector<std::int64_t>> nanos(o.placers);
  std::atomic<bool> failed{false};
  {
    std::vector<std::jthread> threads;
    for (unsigned p = 0; p < o.placers; ++p) {
      threads.emplace_back([&, p] {
        zmq::socket_t socket(zmq, zmq::socket_type::dealer);
        socket.set(zmq::sockopt::linger, 0);
        socket.set(zmq::sockopt::rcvtimeo, 5000);
        socket.connect(echo);
        Pacer pacer(period, p + 1);
        while (remaining.fetch_sub(1) > 0 && !failed.load()) {
          const std::int64_t late = pacer.next();
          const auto sent = Steady::now();
          zmq::message_t frame(request.data(), request.size());
          zmq::message_t back;
          if (!socket.send(frame, zmq::send_flags::none) ||
              !socket.recv(back, zmq::recv_flags::none)) {
            failed = true;
            return;
          }
          pacer.answered();
          nanos[p].push_back(
              late +
              std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now() - sent).count());
        }
      });
    }
  }
  if (failed.load()) return timeoutError("the ZeroMQ echo floor did not answer within 5 s");
  std::vector<std::int64_t> all;
  for (const auto& some : nanos) all.insert(all.end(), some.begin(), some.end());
  return summarize(all);
}

struct ExperimentResult {
  std::vector<std::int64_t> nanos;
  double readyMaxSeconds = 0;
  Status status;
};

// Opens each experiment, waits for its workers, places sessions in it and
// closes it again, one after another.
ExperimentResult runExperiments(zmq::context_t& zmq, const std::string& coordinator,
                                SimulatedFleet& fleet, const CoordinatorBenchOptions& o,
                                Steady::time_point deadline) {
  ExperimentResult result;
  auto client = operatorClient(coordinator);
  if (!client.ok()) return {{}, 0, client.status()};
  PlacementProbe probe(zmq, coordinator);
  for (unsigned e = 0; e < o.experiments && Steady::now() < deadline; ++e) {
    ExperimentSpec spec;
    spec.name = fmt::format("bench-{}", e);
    spec.workers = o.experimentWorkers;
    spec.sessionTypes = {"llvm"};
    const auto opened = Steady::now();
    auto status = (*client)->openExperiment(spec);
    if (!status.ok()) return {result.nanos, result.readyMaxSeconds, status.status()};
    auto ready = (*client)->waitForExperiment(spec.name, spec.workers, 30s);
    if (!ready.ok()) return {result.nanos, result.readyMaxSeconds, ready.status()};
    result.readyMaxSeconds = std::max(result.readyMaxSeconds, secondsSince(opened));
    auto key = Secret::fromHex(status->key);
    if (!key.ok()) return {result.nanos, result.readyMaxSeconds, key.status()};
    for (unsigned s = 0; s < 10 * spec.workers; ++s) {
      auto placed = probe.place("llvm", 5s, spec.name, &*key);
      if (!placed.ok()) return {result.nanos, result.readyMaxSeconds, placed.status()};
      result.nanos.push_back(placed->nanos);
      int host = fleet.hostOf(placed->endpoint);
      if (host >= 0) fleet.sessionStarted(static_cast<unsigned>(host), placed->target);
    }
    // Closing releases its workers: their hosts end the sessions with them.
    if (Status closed = (*client)->closeExperiment(spec.name); !closed.ok()) {
      return {result.nanos, result.readyMaxSeconds, closed};
    }
  }
  return result;
}

std::uint64_t countedSessions(const std::vector<client::WorkerStatus>& workers) {
  std::uint64_t total = 0;
  for (const auto& worker : workers) total += worker.liveSessions;
  return total;
}

// `count` placements by the placers, paced to `rate` per second in all (0:
// unpaced), with the experiments' work beside them when `experiments`.
struct PlacementRun {
  std::vector<std::int64_t> nanos;
  std::uint64_t errors = 0;
  std::uint64_t duplicates = 0;
  std::string firstError;
  double seconds = 0;
  double coordinatorCpu = 0;
  ExperimentResult experiments;
};

PlacementRun runPlacements(zmq::context_t& zmq, const std::string& coordinator, pid_t pid,
                           SimulatedFleet& fleet, const CoordinatorBenchOptions& o,
                           std::uint64_t count, double rate, bool experiments,
                           Steady::time_point deadline) {
  PlacementRun run;
  std::atomic<std::int64_t> remaining{static_cast<std::int64_t>(count)};
  std::vector<PlacerResult> placers(o.placers);
  const Duration period =
      rate > 0
          ? std::chrono::duration_cast<Duration>(std::chrono::duration<double>(o.placers / rate))
          : Duration::zero();
  const double cpu0 = processCpuSeconds(pid);
  const auto start = Steady::now();
  {
    std::vector<std::jthread> threads;
    for (unsigned p = 0; p < o.placers; ++p) {
      threads.emplace_back([&, p] {
        placers[p] =
            runPlacer(zmq, coordinator, fleet, remaining, period, o.endShare, p + 1, deadline);
      });
    }
    if (experiments) {
      threads.emplace_back(
          [&] { run.experiments = runExperiments(zmq, coordinator, fleet, o, deadline); });
    }
  }
  run.seconds = secondsSince(start);
  run.coordinatorCpu = processCpuSeconds(pid) - cpu0;
  for (const PlacerResult& placer : placers) {
    run.nanos.insert(run.nanos.end(), placer.nanos.begin(), placer.nanos.end());
    run.errors += placer.errors;
    run.duplicates += placer.duplicates;
    if (run.firstError.empty()) run.firstError = placer.firstError;
  }
  return run;
}

Status measurePlacements(zmq::context_t& zmq, const std::string& coordinator, pid_t pid,
                         SimulatedFleet& fleet, const CoordinatorBenchOptions& o,
                         Steady::time_point deadline, CountFigures& f) {
  const std::uint64_t total =
      std::min<std::uint64_t>(std::uint64_t{f.hosts} * o.sessionsPerHost, o.maxSessions);
  const std::uint64_t burst = std::min<std::uint64_t>(o.burstPlacements, total / 2);
  // At the offered rate, with experiments at work: the latency figures.
  PlacementRun paced =
      runPlacements(zmq, coordinator, pid, fleet, o, total - burst, o.placementRate,
                    o.experiments > 0 && o.nestingShare > 0, deadline);
  // As fast as the placers go: the most the coordinator places per second.
  PlacementRun unpaced = runPlacements(zmq, coordinator, pid, fleet, o, burst, 0, false, deadline);
  f.placed = paced.nanos.size() + unpaced.nanos.size();
  f.placementErrors = paced.errors + unpaced.errors;
  f.duplicateAnswers = paced.duplicates + unpaced.duplicates;
  f.pacedPerSecond = static_cast<double>(paced.nanos.size()) / paced.seconds;
  f.placingCpuShare = paced.coordinatorCpu / paced.seconds;
  f.placementsPerSecond =
      unpaced.seconds > 0 ? static_cast<double>(unpaced.nanos.size()) / unpaced.seconds : 0;
  f.burstCpuShare = unpaced.seconds > 0 ? unpaced.coordinatorCpu / unpaced.seconds : 0;
  if (!paced.nanos.empty()) {
    f.placementMaxUs =
        static_cast<double>(*std::max_element(paced.nanos.begin(), paced.nanos.end())) / 1e3;
    f.placement = summarize(paced.nanos);
  }
  if (!unpaced.nanos.empty()) f.burstPlacement = summarize(unpaced.nanos);
  const ExperimentResult& experiments = paced.experiments;
  if (!experiments.status.ok()) {
    return Status(experiments.status.code(),
                  "an experiment on the nesting hosts: " + experiments.status.message());
  }
  f.experimentReadyMaxSeconds = experiments.readyMaxSeconds;
  std::vector<std::int64_t> experimentNanos = experiments.nanos;
  f.experimentPlacement = summarize(experimentNanos);
  if (f.placementErrors * 100 > total) {
    return internalError(
        fmt::format("{} of {} placements failed; the first: {}", f.placementErrors, total,
                    paced.firstError.empty() ? unpaced.firstError : paced.firstError));
  }
  return okStatus();
}

Status measureStatus(client::Client& client, const CoordinatorBenchOptions& o, CountFigures& f) {
  std::vector<double> millis;
  for (unsigned i = 0; i < std::max(1u, o.statusSamples); ++i) {
    const auto start = Steady::now();
    KILN_ASSIGN_OR_RETURN(auto workers, client.listCluster());
    millis.push_back(secondsSince(start) * 1e3);
    if (workers.size() != f.hosts) {
      return internalError(fmt::format("the coordinator lists {} of {} hosts while none is lost",
                                       workers.size(), f.hosts));
    }
  }
  std::sort(millis.begin(), millis.end());
  f.statusP50Ms = millis[millis.size() / 2];
  f.statusMaxMs = millis.back();
  return okStatus();
}

// Silences `lost` plain hosts and times how soon each leaves the listing.
Status measureLoss(client::Client& client, SimulatedFleet& fleet, unsigned lost,
                   const CoordinatorBenchOptions& o, CountFigures& f) {
  std::map<std::string, double> noticed;  // endpoint -> seconds; -1 while listed
  const unsigned plain = f.hosts - static_cast<unsigned>(f.hosts * o.nestingShare);
  for (unsigned i = 0; i < lost; ++i) {
    unsigned host = i * std::max(1u, plain / lost);
    noticed[fleet.endpointOf(host)] = -1;
    fleet.silence(host);
  }
  const auto start = Steady::now();
  // Bounded, with room for a loaded machine: the figure is the time, not the bound.
  const Duration limit = std::max<Duration>(o.heartbeatInterval * (o.liveness + 3), 10s);
  while (std::any_of(noticed.begin(), noticed.end(), [](auto& n) { return n.second < 0; })) {
    if (Steady::now() - start > limit) {
      return timeoutError(fmt::format("silent hosts were still listed after {:.1f} s",
                                      std::chrono::duration<double>(limit).count()));
    }
    KILN_ASSIGN_OR_RETURN(auto workers, client.listCluster());
    std::set<std::string> listed;
    for (const auto& worker : workers) listed.insert(worker.endpoint);
    const double now = secondsSince(start);
    for (auto& [endpoint, seconds] : noticed) {
      if (seconds < 0 && !listed.contains(endpoint)) seconds = now;
    }
    std::this_thread::sleep_for(20ms);
  }
  std::vector<double> times;
  for (const auto& entry : noticed) times.push_back(entry.second);
  std::sort(times.begin(), times.end());
  f.lostNoticedMedianSeconds = times[times.size() / 2];
  f.lostNoticedMaxSeconds = times.back();
  return okStatus();
}

// Kills the coordinator and starts a new one on the same endpoint.
Status measureRestart(testsupport::ChildCluster& cluster, zmq::context_t& zmq,
                      CoordinatorProcess& coordinator, SimulatedFleet& fleet,
                      const CoordinatorBenchOptions& o, CountFigures& f) {
  // The hosts' sessions, once their reports have settled.
  std::this_thread::sleep_for(2 * o.heartbeatInterval);
  const std::uint64_t truth = fleet.liveSessions();
  const std::string endpoint = coordinator.endpoint;
  const std::vector<int> registrationsBefore = fleet.registrationsByHost();
  cluster.retire(coordinator.child);  // SIGKILL
  KILN_ASSIGN_OR_RETURN(coordinator, spawnCoordinator(cluster, endpoint, o));
  const auto started = Steady::now();
  PlacementProbe probe(zmq, endpoint);
  double firstPlacement = -1;
  while (firstPlacement < 0 && Steady::now() - started < 10 * o.heartbeatInterval + 10s) {
    auto placed = probe.place("llvm", 100ms);
    if (placed.ok()) {
      firstPlacement = secondsSince(started);
      int host = fleet.hostOf(placed->endpoint);
      if (host >= 0) fleet.sessionStarted(static_cast<unsigned>(host), 0);
    }
  }
  if (firstPlacement < 0) return timeoutError("no placement succeeded after the restart");
  f.restartFirstPlacementSeconds = firstPlacement;
  // Every live host has registered again (a host still registered with the
  // old coordinator's id has not noticed yet).
  auto allAgain = [&] {
    std::vector<int> now = fleet.registrationsByHost();
    for (std::size_t h = 0; h < now.size(); ++h) {
      if (now[h] >= 0 && now[h] <= registrationsBefore[h]) return false;
    }
    return true;
  };
  KILN_RETURN_IF_ERROR(waitFor(allAgain, 10 * o.heartbeatInterval + 30s,
                               "every live host registering with the new coordinator")
                           .status());
  f.restartReregisterSeconds = secondsSince(started);
  f.duplicateAnswers += probe.duplicateAnswers();
  // Once the hosts' next heartbeats are in, every session must be counted.
  KILN_ASSIGN_OR_RETURN(auto after, operatorClient(endpoint));
  const std::uint64_t expected = truth + 1;  // and the one placed after the restart
  std::uint64_t counted = 0;
  auto settled = waitFor(
      [&] {
        auto workers = after->listCluster();
        counted = workers.ok() ? countedSessions(*workers) : 0;
        return counted == expected;
      },
      // Returns as soon as they are; a loaded machine may delay heartbeats.
      std::max<Duration>(3 * o.heartbeatInterval, 5s), "the hosts' sessions being counted again");
  f.restartSessionsLost = static_cast<std::int64_t>(expected) - static_cast<std::int64_t>(counted);
  (void)settled;  // a mismatch is the figure itself
  return okStatus();
}

Result<CountFigures> measureCount(testsupport::ChildCluster& cluster, zmq::context_t& zmq,
                                  const std::string& echo, unsigned hosts,
                                  const CoordinatorBenchOptions& o) {
  CountFigures f;
  f.hosts = hosts;
  const auto deadline = Steady::now() + std::chrono::duration_cast<Duration>(
                                            std::chrono::duration<double>(o.maxSecondsPerCount));
  KILN_ASSIGN_OR_RETURN(CoordinatorProcess coordinator,
                        spawnCoordinator(cluster, "tcp://127.0.0.1:0", o));
  FleetOptions fleetOptions;
  fleetOptions.hosts = hosts;
  fleetOptions.nestingHosts = static_cast<unsigned>(hosts * o.nestingShare);
  fleetOptions.slots = o.slots;
  fleetOptions.heartbeatInterval = o.heartbeatInterval;
  fleetOptions.liveness = o.liveness;
  fleetOptions.threads = o.fleetThreads;
  fleetOptions.token = o.workerToken;
  KILN_ASSIGN_OR_RETURN(auto fleet, SimulatedFleet::start(zmq, coordinator.endpoint, fleetOptions));
  KILN_ASSIGN_OR_RETURN(f.registerSeconds,
                        waitFor([&] { return fleet->registered() == hosts; }, 60s,
                                fmt::format("{} hosts registering", hosts)));
  // Steady state: heartbeats only.
  std::this_thread::sleep_for(o.heartbeatInterval);
  double cpu0 = processCpuSeconds(coordinator.pid());
  std::this_thread::sleep_for(std::chrono::duration<double>(o.idleSeconds));
  double idleCpu = processCpuSeconds(coordinator.pid()) - cpu0;
  f.idleCpuShare = idleCpu / o.idleSeconds;
  const double heartbeats =
      hosts * o.idleSeconds / std::chrono::duration<double>(o.heartbeatInterval).count();
  f.heartbeatCpuMicros = idleCpu / heartbeats * 1e6;
  // The floor, with the hosts heartbeating as they do while placements run.
  const std::uint64_t floorSamples = std::min<std::uint64_t>(
      5000, std::max<std::uint64_t>(1, std::uint64_t{hosts} * o.sessionsPerHost / 4));
  KILN_ASSIGN_OR_RETURN(f.floor, measureFloor(zmq, echo, o, floorSamples, o.placementRate));
  KILN_ASSIGN_OR_RETURN(
      f.burstFloor,
      measureFloor(
          zmq, echo, o,
          std::max<std::uint64_t>(1, std::min<std::uint64_t>(floorSamples, o.burstPlacements)), 0));

  KILN_RETURN_IF_ERROR(
      measurePlacements(zmq, coordinator.endpoint, coordinator.pid(), *fleet, o, deadline, f));
  f.rssMiB = static_cast<double>(residentBytes(coordinator.pid())) / (1 << 20);
  KILN_ASSIGN_OR_RETURN(auto client, operatorClient(coordinator.endpoint));
  KILN_RETURN_IF_ERROR(measureStatus(*client, o, f));
  const unsigned lost = std::min(o.lostHosts, hosts / 2);
  if (lost > 0) KILN_RETURN_IF_ERROR(measureLoss(*client, *fleet, lost, o, f));
  client.reset();
  if (o.restart) {
    KILN_RETURN_IF_ERROR(measureRestart(cluster, zmq, coordinator, *fleet, o, f));
  }
  cluster.retire(coordinator.child);
  return f;
}

// Each fleet host holds two descriptors (its socket and ZeroMQ's mailbox).
Status raiseDescriptorLimit(unsigned hosts) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return okStatus();
  const rlim_t wanted = rlim_t{hosts} * 3 + 512;
  if (limit.rlim_cur >= wanted) return okStatus();
  if (limit.rlim_max < wanted) {
    return invalidArgument(
        fmt::format("{} hosts need about {} file descriptors; this shell allows {} (ulimit -Hn)",
                    hosts, wanted, limit.rlim_max));
  }
  limit.rlim_cur = wanted;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  return okStatus();
}

// One figure at every host count: a row, with what it is judged against.
struct Figure {
  const char* name;
  const char* judgedAgainst;
  double (*value)(const CountFigures&);
};

const std::vector<Figure>& figures() {
  static const std::vector<Figure> all = {
      {"sessions placed", "hosts x --sessions-per-host, at most --max-sessions",
       [](const CountFigures& f) { return double(f.placed); }},
      {"placements/s offered", "--placement-rate (paced placers; the latency rows)",
       [](const CountFigures& f) { return f.pacedPerSecond; }},
      {"placement p50, us", "the floor's p50 below",
       [](const CountFigures& f) { return f.placement.p50us; }},
      {"placement p99, us", "target <= 1000 at 1,000 hosts; the floor's p99",
       [](const CountFigures& f) { return f.placement.p99us; }},
      {"floor: ZeroMQ echo p50, us", "same size, clients and pacing, same run",
       [](const CountFigures& f) { return f.floor.p50us; }},
      {"floor: ZeroMQ echo p99, us", "", [](const CountFigures& f) { return f.floor.p99us; }},
      {"placement max, us", "", [](const CountFigures& f) { return f.placementMaxUs; }},
      {"placements/s, unpaced", "the placers as fast as answers come",
       [](const CountFigures& f) { return f.placementsPerSecond; }},
      {"placement p99 unpaced, us", "the unpaced floor's p99 below",
       [](const CountFigures& f) { return f.burstPlacement.p99us; }},
      {"floor: ZeroMQ echo p50 unpaced, us", "same size and clients, unpaced, same run",
       [](const CountFigures& f) { return f.burstFloor.p50us; }},
      {"floor: ZeroMQ echo p99 unpaced, us", "",
       [](const CountFigures& f) { return f.burstFloor.p99us; }},
      {"experiment placement p99, us", "inside experiments on the nesting hosts",
       [](const CountFigures& f) { return f.experimentPlacement.p99us; }},
      {"experiment ready, max s", "open until all its workers run (hosts answer every 20 ms)",
       [](const CountFigures& f) { return f.experimentReadyMaxSeconds; }},
      {"coordinator CPU, heartbeats only, % of a core", "target <= 25 at 1,000 hosts, 1 s",
       [](const CountFigures& f) { return 100 * f.idleCpuShare; }},
      {"coordinator CPU per heartbeat, us", "with the ping it sends back",
       [](const CountFigures& f) { return f.heartbeatCpuMicros; }},
      {"coordinator CPU at the offered rate, % of a core", "",
       [](const CountFigures& f) { return 100 * f.placingCpuShare; }},
      {"coordinator CPU unpaced, % of a core", "",
       [](const CountFigures& f) { return 100 * f.burstCpuShare; }},
      {"coordinator RSS, MiB", "target <= 300 (the kiln binary alone: about 60)",
       [](const CountFigures& f) { return f.rssMiB; }},
      {"status (every host listed) p50, ms", "`kiln status`",
       [](const CountFigures& f) { return f.statusP50Ms; }},
      {"status max, ms", "", [](const CountFigures& f) { return f.statusMaxMs; }},
      {"all hosts registered, s", "from the hosts' start",
       [](const CountFigures& f) { return f.registerSeconds; }},
      {"silent host declared lost, median s", "",
       [](const CountFigures& f) { return f.lostNoticedMedianSeconds; }},
      {"silent host declared lost, max s", "liveness window: liveness x heartbeat",
       [](const CountFigures& f) { return f.lostNoticedMaxSeconds; }},
      {"restart: all hosts registered again, s", "after the new coordinator listens",
       [](const CountFigures& f) { return f.restartReregisterSeconds; }},
      {"restart: first placement, s", "target: within a heartbeat of registration",
       [](const CountFigures& f) { return f.restartFirstPlacementSeconds; }},
      {"restart: sessions not counted", "target 0 (hosts' sessions after their heartbeats)",
       [](const CountFigures& f) { return double(f.restartSessionsLost); }},
      {"requests answered twice", "target 0",
       [](const CountFigures& f) { return double(f.duplicateAnswers); }},
      {"placement errors", "target 0",
       [](const CountFigures& f) { return double(f.placementErrors); }},
  };
  return all;
}

std::vector<Row> rowsOf(const std::vector<CountFigures>& counts, const CoordinatorBenchOptions& o) {
  std::vector<Row> rows;
  for (const Figure& figure : figures()) {
    if (!o.restart && std::string_view(figure.name).starts_with("restart")) continue;
    Row row;
    row.text = {{"figure", figure.name}, {"judged against", figure.judgedAgainst}};
    for (const CountFigures& f : counts) {
      row.numbers.emplace_back(fmt::format("{} hosts", f.hosts), figure.value(f));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

Result<Report> runCoordinatorBench(const CoordinatorBenchOptions& options) {
  // Hosts register with a token only the bench's coordinators know.
  KILN_ASSIGN_OR_RETURN(WorkingDirectory tokenDirectory,
                        WorkingDirectory::create({}, "kiln-coordinator-bench"));
  CoordinatorBenchOptions o = options;
  o.workerTokenFile = (tokenDirectory.path() / "worker-token").string();
  KILN_ASSIGN_OR_RETURN(o.workerToken, loadOrCreateWorkerToken(o.workerTokenFile));
  if (o.hostCounts.empty() || o.placers == 0 || o.heartbeatInterval <= Duration::zero() ||
      o.liveness < 1 || o.nestingShare < 0 || o.nestingShare >= 1 || o.endShare < 0 ||
      o.endShare >= 1) {
    return invalidArgument(
        "coordinator bench: host counts, placers >= 1, a heartbeat > 0, liveness >= 1, and "
        "shares in [0, 1) are needed");
  }
  const unsigned most = *std::max_element(o.hostCounts.begin(), o.hostCounts.end());
  KILN_RETURN_IF_ERROR(raiseDescriptorLimit(most));
  zmq::context_t zmq(1);
  zmq.set(zmq::ctxopt::max_sockets, static_cast<int>(most + 1024));  // hosts, placers, clients
  KILN_ASSIGN_OR_RETURN(auto cluster, testsupport::ChildCluster::create(kilnExecutable()));
  Report report;
  report.title = fmt::format(
      "kiln bench coordinator: one coordinator process, simulated hosts ({}% nesting hosts, "
      "{} slots each) on real sockets, {} placers, heartbeats every {:.2f} s",
      static_cast<int>(100 * o.nestingShare), o.slots, o.placers,
      std::chrono::duration<double>(o.heartbeatInterval).count());
  std::vector<CountFigures> counts;
  auto measureAll = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * echoServer,
                          cluster.spawn({"bench", "zmq-echo", "--listen", "tcp://127.0.0.1:0"}));
    for (unsigned hosts : o.hostCounts) {
      KILN_ASSIGN_OR_RETURN(CountFigures figures,
                            measureCount(cluster, zmq, echoServer->endpoint, hosts, o));
      counts.push_back(figures);
    }
    return okStatus();
  };
  // Pinned: every process and thread of the run (they start inside) on one
  // CPU, so that no wake-up crosses CPUs; the hosts then share it too.
  KILN_RETURN_IF_ERROR(o.pinned ? runPinnedToCpu0(measureAll) : measureAll());
  if (o.pinned) report.title += "; everything pinned to CPU 0";
  report.rows = rowsOf(counts, o);
  report.notes = {
      fmt::format("placers: {} clients, one request in flight each, paced to {} placements/s "
                  "in all, then {} unpaced; the simulated hosts share the machine with the "
                  "coordinator",
                  o.placers, o.placementRate, o.burstPlacements),
      "restart: SIGKILL, then a new coordinator on the same endpoint; the hosts learn of it "
      "at their next heartbeat (answered: register again)",
  };
  return report;
}

}  // namespace kiln::bench
