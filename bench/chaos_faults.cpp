#include "bench/chaos_faults.h"

#include <fmt/format.h>
#include <signal.h>

#include <array>
#include <fstream>
#include <sstream>

#include "bench/kiln_executable.h"

namespace kiln::bench {

using namespace std::chrono_literals;

namespace {

struct FaultName {
  ChaosFault fault;
  std::string_view name;
  std::string_view description;
};

constexpr std::array kFaults = {
    FaultName{ChaosFault::kKill, "kill", "a random worker SIGKILLed, then started again"},
    FaultName{ChaosFault::kCrash, "crash",
              "a neighbour's LLVM crash (loop-bound-split segfaults LLVM 19) on a random worker, "
              "which then stops and is started again"},
    FaultName{ChaosFault::kCoordinator, "coordinator",
              "the coordinator SIGKILLed and started again on its address"},
    FaultName{ChaosFault::kFreeze, "freeze",
              "a random worker SIGSTOPped, then SIGCONTed: silent to everyone meanwhile, it "
              "fences its sessions when it wakes"},
    FaultName{ChaosFault::kPartition, "partition",
              "a random worker host's cable pulled (its network namespace cut off the bed), then "
              "put back: the worker runs on, unreachable, and fences its sessions"},
    FaultName{ChaosFault::kNestChild, "nest-child",
              "the isolated child process that runs the experiment on a kiln nest --isolate host "
              "SIGKILLed, then started again by its host"},
};

constexpr std::string_view kExperiment = "chaos";

Result<std::string> readModule(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound(fmt::format("cannot read the crasher module '{}'", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The children of `pid` (the kernel's list; Linux 3.5 and later).
std::vector<int> childrenOf(int pid) {
  std::ifstream list(fmt::format("/proc/{}/task/{}/children", pid, pid));
  std::vector<int> children;
  for (int child = 0; list >> child;) children.push_back(child);
  return children;
}

}  // namespace

Result<ChaosFault> parseChaosFault(std::string_view name) {
  std::string known;
  for (const FaultName& entry : kFaults) {
    if (entry.name == name) return entry.fault;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  return invalidArgument(fmt::format("unknown fault '{}' (known: {})", name, known));
}

std::string_view chaosFaultName(ChaosFault fault) {
  for (const FaultName& entry : kFaults) {
    if (entry.fault == fault) return entry.name;
  }
  return "?";
}

std::string_view chaosFaultDescription(ChaosFault fault) {
  for (const FaultName& entry : kFaults) {
    if (entry.fault == fault) return entry.description;
  }
  return "?";
}

ChaosCluster::ChaosCluster(ChaosFault fault, ChaosClusterOptions options,
                           testsupport::ChildCluster cluster)
    : fault_(fault), options_(std::move(options)), cluster_(std::move(cluster)) {}

ChaosCluster::~ChaosCluster() { stop(); }

Result<std::unique_ptr<ChaosCluster>> ChaosCluster::create(ChaosFault fault,
                                                           const ChaosClusterOptions& options) {
  if (options.workers < 2 &&
      (fault == ChaosFault::kKill || fault == ChaosFault::kCrash || fault == ChaosFault::kFreeze)) {
    return invalidArgument("this fault needs at least 2 workers: one may be down");
  }
  if (options.minPauseSeconds <= 0 || options.maxPauseSeconds < options.minPauseSeconds) {
    return invalidArgument(fmt::format("pause [{}, {}] s between faults is not a positive range",
                                       options.minPauseSeconds, options.maxPauseSeconds));
  }
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildCluster children,
      testsupport::ChildCluster::create(
          options.kiln.empty() ? kilnExecutable() : std::filesystem::path(options.kiln)));
  std::unique_ptr<ChaosCluster> cluster(new ChaosCluster(fault, options, std::move(children)));
  if (fault == ChaosFault::kCrash) {
    KILN_ASSIGN_OR_RETURN(cluster->crasherBytes_, readModule(options.crasherModule));
  }
  if (fault == ChaosFault::kPartition) {
    // Host 1 the coordinator, then one per worker, the client on the last.
    KILN_ASSIGN_OR_RETURN(cluster->bed_,
                          testsupport::NetBed::create(options.netbed, options.workers + 2));
  }
  KILN_RETURN_IF_ERROR(cluster->spawnHosts());
  return cluster;
}

Status ChaosCluster::spawnHosts() {
  const std::string heartbeat = fmt::format("{}", options_.heartbeatSeconds);
  Restartable coordinator{"coordinator",
                          {"coordinator", "--listen", "tcp://" + listenAddress(1) + ":0",
                           "--heartbeat-seconds", heartbeat, "--log-level", "off"},
                          wrapperFor(1)};
  KILN_ASSIGN_OR_RETURN(coordinator.running, cluster_.spawn(coordinator.args, coordinator.wrapper));
  coordinatorEndpoint_ = coordinator.running->endpoint;
  coordinator.args[2] = coordinatorEndpoint_;  // a restarted coordinator is where workers look
  coordinator.killable = fault_ == ChaosFault::kCoordinator;
  hosts_.push_back(std::move(coordinator));

  const bool nest = fault_ == ChaosFault::kNestChild;
  for (unsigned i = 0; i < (nest ? 1 : options_.workers); ++i) {
    std::vector<std::string> args =
        testsupport::benchWorkerArgs(coordinatorEndpoint_, options_.slots);
    args[std::find(args.begin(), args.end(), "--heartbeat-seconds") - args.begin() + 1] = heartbeat;
    if (nest) {
      args[0] = "nest";
      args.insert(args.begin() + 1, "--isolate");
    }
    const unsigned bedHost = i + 2;
    args.insert(args.end(), {"--listen", "tcp://" + listenAddress(bedHost) + ":0"});
    // Every kind of run gets the same flags, so that quiet and faulted runs
    // have the same action tables: fault injection keeps the crasher pass.
    args.push_back("--enable-fault-injection");
    Restartable host{nest ? "nest" : fmt::format("worker-{}", i), std::move(args),
                     wrapperFor(bedHost)};
    host.killable = fault_ == ChaosFault::kKill;
    bedHosts_[host.label] = bedHost;
    KILN_ASSIGN_OR_RETURN(host.running, cluster_.spawn(host.args, host.wrapper));
    hosts_.push_back(std::move(host));
  }
  return okStatus();
}

std::string ChaosCluster::listenAddress(unsigned bedHost) const {
  return bed_ ? bed_->address(bedHost) : "127.0.0.1";
}

std::vector<std::string> ChaosCluster::wrapperFor(unsigned bedHost) const {
  return bed_ ? bed_->runOn(bedHost) : std::vector<std::string>{};
}

Result<std::unique_ptr<client::Client>> ChaosCluster::connect() {
  // The client on a host of its own: this thread, and the threads its
  // client starts, move there.
  if (bed_) KILN_RETURN_IF_ERROR(bed_->enter(bed_->hosts()));
  client::ClientOptions options;
  options.coordinator = coordinatorEndpoint_;
  if (options_.requestSeconds > 0) {
    options.requestTimeout = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(options_.requestSeconds));
  }
  options.leasePeriod = 500ms;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  const std::size_t hosts = hosts_.empty() ? 0 : hosts_.size() - 1;
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*client, hosts, 20s));
  if (fault_ != ChaosFault::kNestChild) return client;
  if (experimentKey_.empty()) {
    ExperimentSpec spec;
    spec.name = std::string(kExperiment);
    KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, client->openExperiment(spec));
    KILN_RETURN_IF_ERROR(client->waitForExperiment(spec.name, 1, 20s).status());
    experimentKey_ = opened.key;
  }
  options.experiment = std::string(kExperiment);
  options.experimentKey = experimentKey_;
  return client::Client::connect(options);
}

void ChaosCluster::start(bool inject) {
  const bool supervisorKills =
      inject && (fault_ == ChaosFault::kKill || fault_ == ChaosFault::kCoordinator);
  supervisor_.emplace(cluster_, std::move(hosts_),
                      KillPacing{options_.minPauseSeconds, options_.maxPauseSeconds, options_.seed,
                                 supervisorKills});
  if (inject && !supervisorKills) injector_ = std::thread([this] { injectLoop(); });
}

FaultFigures ChaosCluster::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (injector_.joinable()) injector_.join();
  FaultFigures figures;
  if (!supervisor_) return figures;
  supervisor_->stop();
  figures.injected = injected_.load() + supervisor_->kills();
  figures.diedOnTheirOwn = supervisor_->unexpectedDeaths();
  figures.restartsAfterCaughtCrash = supervisor_->restartsAfterCaughtCrash();
  std::lock_guard lock(mutex_);
  figures.problem = !problem_.empty() ? problem_ : supervisor_->problem();
  return figures;
}

bool ChaosCluster::pauseFor(std::chrono::milliseconds pause) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, pause, [this] { return stopping_; });
}

void ChaosCluster::injectLoop() {
  std::mt19937_64 random(options_.seed);
  std::uniform_real_distribution<double> pause(options_.minPauseSeconds, options_.maxPauseSeconds);
  while (pauseFor(std::chrono::milliseconds(static_cast<long>(pause(random) * 1000)))) {
    Status injected = injectOnce(random);
    if (injected.ok()) {
      ++injected_;
      continue;
    }
    std::lock_guard lock(mutex_);
    if (problem_.empty()) problem_ = injected.toString();
  }
}

Status ChaosCluster::injectOnce(std::mt19937_64& random) {
  std::vector<RunningProcess> up;
  for (const RunningProcess& host : supervisor_->running()) {
    if (host.pid != 0 && host.label != "coordinator") up.push_back(host);
  }
  if (up.empty()) return notFound("no host is up to inject a fault into");
  const RunningProcess& victim =
      up[std::uniform_int_distribution<std::size_t>(0, up.size() - 1)(random)];
  switch (fault_) {
    case ChaosFault::kCrash:
      return plantCrash(victim);
    case ChaosFault::kFreeze:
      return freeze(victim.pid);
    case ChaosFault::kPartition:
      return cutOff(victim.label);
    case ChaosFault::kNestChild:
      return killNestChild(victim.pid, random);
    default:
      return internalError("the supervisor injects this fault itself");
  }
}

Status ChaosCluster::plantCrash(const RunningProcess& worker) {
  if (!planter_) {
    client::ClientOptions options;
    options.coordinator = coordinatorEndpoint_;
    options.requestTimeout = 30s;
    KILN_ASSIGN_OR_RETURN(planter_, client::Client::connect(options));
  }
  client::SessionOptions start{"llvm", "benchmark://chaos/crasher"};
  start.program = crasherBytes_;
  auto session = planter_->startSessionOn(worker.endpoint, start);
  if (!session.ok()) return session.status();
  auto action = (*session)->spaces().actionSpaces.front().findChoice(options_.crasherAction);
  if (!action.ok()) {
    return notFound(fmt::format("the workers have no '{}' action: is fault injection on? ({})",
                                options_.crasherAction, action.status().message()));
  }
  auto crashed =
      (*session)->step({Value(static_cast<std::int64_t>(*action))}, std::vector<std::uint32_t>{});
  if (crashed.ok()) return internalError("the planted crash did not crash LLVM");
  // The worker answered the crash, and stops to be started again.
  if (crashed.status().code() != ErrorCode::kCompileError) return crashed.status();
  return okStatus();
}

Status ChaosCluster::freeze(int pid) {
  if (::kill(pid, SIGSTOP) != 0) return internalError(fmt::format("SIGSTOP {} failed", pid));
  // Woken even when stopping: a frozen worker must not outlive the bench.
  (void)pauseFor(std::chrono::milliseconds(static_cast<long>(options_.outageSeconds * 1000)));
  ::kill(pid, SIGCONT);
  return okStatus();
}

Status ChaosCluster::cutOff(const std::string& label) {
  const unsigned host = bedHosts_.at(label);
  KILN_RETURN_IF_ERROR(bed_->cut(host));
  // Put back even when stopping: the quiet end of the run needs every host.
  (void)pauseFor(std::chrono::milliseconds(static_cast<long>(options_.outageSeconds * 1000)));
  return bed_->heal(host);
}

Status ChaosCluster::killNestChild(int hostPid, std::mt19937_64& random) {
  std::vector<int> children = childrenOf(hostPid);
  if (children.empty()) return notFound("the nesting host has no child process (yet)");
  const int child =
      children[std::uniform_int_distribution<std::size_t>(0, children.size() - 1)(random)];
  if (::kill(child, SIGKILL) != 0) return internalError(fmt::format("SIGKILL {} failed", child));
  return okStatus();
}

}  // namespace kiln::bench
