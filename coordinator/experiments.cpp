#include "coordinator/experiments.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/metrics/log_fields.h"
#include "common/transport/frame.h"

namespace kiln {

ExperimentBook::ExperimentBook(const Clock& clock, Logger logger, Duration heartbeatInterval,
                               Duration lease, ExperimentLimits limits)
    : clock_(clock),
      logger_(std::move(logger)),
      interval_(heartbeatInterval),
      lease_(lease),
      limits_(limits) {}

Status ExperimentBook::checkQuota(const std::string& name, ClientId owner) const {
  if (experiments_.size() >= limits_.maxExperiments) {
    return overloaded(fmt::format(
        "experiment '{}' cannot open: this coordinator holds its maximum of {} experiments "
        "(limit --max-experiments); retry when some have closed",
        name, experiments_.size()));
  }
  const auto held = std::count_if(experiments_.begin(), experiments_.end(),
                                  [&](const auto& open) { return open.second.owner == owner; });
  if (static_cast<std::uint64_t>(held) >= limits_.maxPerClient) {
    return overloaded(fmt::format(
        "experiment '{}' cannot open: this client already has {} experiments open (limit "
        "--max-experiments-per-client): close one first",
        name, held));
  }
  return okStatus();
}

Result<Secret> ExperimentBook::open(ExperimentSpec spec, capnp::Data::Reader presentedKey,
                                    ClientId owner) {
  if (spec.name.empty() || spec.name.size() > 128) {
    return invalidArgument("an experiment needs a name of 1 to 128 characters");
  }
  if (spec.workers == 0) {
    return invalidArgument(fmt::format("experiment '{}' asks for no workers; ask for 1 to {}",
                                       spec.name, limits_.maxWorkers));
  }
  if (spec.workers > limits_.maxWorkers) {
    return permissionDenied(fmt::format(
        "experiment '{}' asks for {} workers; this coordinator allows at most {} (limit "
        "--max-experiment-workers)",
        spec.name, spec.workers, limits_.maxWorkers));
  }
  if (spec.weight == 0) {
    return invalidArgument(fmt::format("experiment '{}': weight must be at least 1", spec.name));
  }
  if (spec.weight > limits_.maxWeight) {
    return permissionDenied(fmt::format(
        "experiment '{}' asks for weight {}; this coordinator allows at most {} (the operator's "
        "kiln coordinator --max-experiment-weight)",
        spec.name, spec.weight, limits_.maxWeight));
  }
  Secret key;
  if (presentedKey.size() != 0) {
    KILN_ASSIGN_OR_RETURN(
        key, Secret::fromBytes(
                 {reinterpret_cast<const char*>(presentedKey.begin()), presentedKey.size()},
                 "an experiment key"));
  }
  if (experiments_.contains(spec.name)) {
    KILN_RETURN_IF_ERROR(authorize(spec.name, presentedKey));
  } else {
    KILN_RETURN_IF_ERROR(checkQuota(spec.name, owner));
    if (key.empty()) key = Secret::draw();
  }
  auto [it, created] = experiments_.try_emplace(spec.name);
  ExperimentRecord& record = it->second;
  if (created) {
    record.keyDigest = keyDigest(key.bytes());
    record.owner = owner;
  }
  if (!created && record.spec.sessionTypes != spec.sessionTypes) {
    return invalidArgument(
        fmt::format("experiment '{}' is open with other session types; close it first", spec.name));
  }
  if (created)
    logger_->info("experiment opened: {} workers={} weight={}", logfields::experiment(spec.name),
                  spec.workers, spec.weight);
  record.spec = std::move(spec);
  record.lastHeard = clock_.now();
  return key;
}

Status ExperimentBook::authorize(const std::string& name, capnp::Data::Reader key) const {
  auto found = experiments_.find(name);
  if (found == experiments_.end()) {
    return notFound(fmt::format("no experiment named '{}' is open", name));
  }
  if (!keyMatches(key, found->second.keyDigest)) {
    return permissionDenied(fmt::format(
        "experiment '{}' is open, and this request does not carry its key: present the key that "
        "opening it returned (ClientOptions::experimentKey; experiment_key= in Python), or use "
        "another name",
        name));
  }
  return okStatus();
}

std::string ExperimentRecord::passOn(const WorkerRecord& host) const {
  return experimentPass(keyDigest, host.endpoint);
}

bool ExperimentRecord::owns(const UnderlyingStatus& status, const WorkerRecord& host) const {
  return status.spec.experiment == spec.name &&
         passMatches(capnp::Data::Reader(
                         reinterpret_cast<const capnp::byte*>(status.spec.experimentPass.data()),
                         status.spec.experimentPass.size()),
                     passOn(host));
}

void ExperimentBook::touch(const std::string& name) {
  auto found = experiments_.find(name);
  if (found != experiments_.end()) found->second.lastHeard = clock_.now();
}

const ExperimentRecord* ExperimentBook::find(const std::string& name) const {
  auto found = experiments_.find(name);
  return found == experiments_.end() ? nullptr : &found->second;
}

Status ExperimentBook::close(const std::string& name, const HostTable& hosts,
                             std::vector<Outgoing>& out) {
  auto found = experiments_.find(name);
  if (found == experiments_.end()) {
    return notFound(fmt::format("no experiment named '{}' is open", name));
  }
  for (const auto& [id, worker] : found->second.workers) {
    auto host = hosts.find(worker.host);
    if (host != hosts.end()) sendRelease(host->second, id, out);
  }
  logger_->info("experiment closed: {} releasing={} workers", logfields::experiment(name),
                found->second.workers.size());
  experiments_.erase(found);
  return okStatus();
}

void ExperimentBook::sendCreate(const WorkerRecord& host, const ExperimentRecord& experiment,
                                std::uint64_t workerId, std::vector<Outgoing>& out) {
  capnp::MallocMessageBuilder builder(256);
  auto envelope = initEnvelope(builder, nextRequestId_++);
  envelope.setExperiment(experiment.spec.name);
  UnderlyingSpec spec{workerId,
                      experiment.spec.name,
                      experiment.spec.weight,
                      experiment.spec.maxSessions,
                      experiment.spec.sessionTypes,
                      experiment.passOn(host)};
  toWire(spec, envelope.initRequest().initCreateWorker().initSpec());
  out.push_back({host.routingId, encodeFrame(builder)});
  logger_->info("experiment worker create: {} worker={:x} host={}",
                logfields::experiment(experiment.spec.name), workerId, host.snapshot.id.value);
}

void ExperimentBook::sendRelease(const WorkerRecord& host, std::uint64_t workerId,
                                 std::vector<Outgoing>& out) {
  capnp::MallocMessageBuilder builder(64);
  initEnvelope(builder, nextRequestId_++).initRequest().initReleaseWorker().setWorkerId(workerId);
  out.push_back({host.routingId, encodeFrame(builder)});
  // The host's last report names the owner; a worker not yet reported has none.
  std::string owner;
  for (const UnderlyingStatus& status : host.underlying) {
    if (status.spec.workerId == workerId) owner = status.spec.experiment;
  }
  logger_->info("experiment worker release: {} worker={:x} host={}", logfields::experiment(owner),
                workerId, host.snapshot.id.value);
}

void ExperimentBook::onHostReport(const WorkerRecord& host, std::vector<Outgoing>& out) {
  TimePoint now = clock_.now();
  std::set<std::uint64_t> reported;
  for (const UnderlyingStatus& status : host.underlying) {
    std::uint64_t id = status.spec.workerId;
    reported.insert(id);
    auto experiment = experiments_.find(status.spec.experiment);
    // Only a worker made for this very experiment (its pass for this host,
    // made from its key's digest) is its: another of the same name is a stray.
    if (experiment != experiments_.end() && experiment->second.owns(status, host)) {
      ExperimentRecord& record = experiment->second;
      auto worker = record.workers.find(id);
      if (worker == record.workers.end() && record.workers.size() < record.spec.workers) {
        // A worker the experiment lost track of (e.g. this coordinator restarted).
        worker = record.workers.emplace(id, ExperimentWorkerState{host.snapshot.id}).first;
        logger_->info("experiment adopted a worker: {} worker={:x} host={}",
                      logfields::experiment(record.spec.name), id, host.snapshot.id.value);
      }
      if (worker != record.workers.end() && worker->second.host == host.snapshot.id) {
        worker->second.ready = true;
        worker->second.load = status.load;
        strays_.erase(id);
        continue;
      }
    }
    // Nobody wants it: give a re-opening experiment a lease's time to claim it.
    auto [stray, fresh] = strays_.try_emplace(id, now);
    if (now - stray->second > lease_) {
      logger_->info("releasing an unclaimed worker: {} worker={:x} host={}",
                    logfields::experiment(status.spec.experiment), id, host.snapshot.id.value);
      sendRelease(host, id, out);
      strays_.erase(stray);
    }
  }
  // A worker the host no longer lists (it restarted) must be created again.
  for (auto& [name, record] : experiments_) {
    for (auto& [id, worker] : record.workers) {
      if (worker.host == host.snapshot.id && worker.ready && !reported.contains(id)) {
        worker.ready = false;
        worker.createSent = {};
      }
    }
  }
}

void ExperimentBook::adoptReported(ExperimentRecord& record, const HostTable& hosts) {
  // Workers that hosts still run for this experiment (the coordinator
  // restarted, or the experiment re-opened) come before new ones: their
  // sessions live on. Without this, a re-opened experiment would plan fresh
  // workers first and leave the old ones to be released as strays.
  for (const auto& [hostId, host] : hosts) {
    for (const UnderlyingStatus& status : host.underlying) {
      if (record.workers.size() >= record.spec.workers) return;
      if (status.spec.experiment != record.spec.name) continue;
      if (!record.owns(status, host)) continue;
      std::uint64_t id = status.spec.workerId;
      if (record.workers.contains(id)) continue;
      ExperimentWorkerState adopted{hostId};
      adopted.ready = true;
      adopted.load = status.load;
      record.workers.emplace(id, std::move(adopted));
      strays_.erase(id);
      logger_->info("experiment adopted worker: {} worker={:x} host={}",
                    logfields::experiment(record.spec.name), id, hostId.value);
    }
  }
}

void ExperimentBook::onHostLost(WorkerId host) {
  for (auto& [name, record] : experiments_) {
    std::erase_if(record.workers, [&](const auto& entry) { return entry.second.host == host; });
  }
}

std::vector<NestingHostView> ExperimentBook::hostViews(const HostTable& hosts) const {
  std::vector<NestingHostView> views;
  for (const auto& [id, host] : hosts) {
    if (!host.nesting) continue;
    NestingHostView view{id, host.snapshot.slots, host.snapshot.sessionTypes, 0};
    for (const auto& [name, record] : experiments_) {
      for (const auto& [workerId, worker] : record.workers) {
        if (worker.host == id) ++view.underlyingWorkers;
      }
    }
    views.push_back(std::move(view));
  }
  return views;
}

std::vector<AssignedWorker> ExperimentBook::assigned(const ExperimentRecord& experiment) const {
  std::vector<AssignedWorker> result;
  for (const auto& [id, worker] : experiment.workers) {
    result.push_back({id, worker.host, worker.load.liveSessions});
  }
  return result;
}

void ExperimentBook::reconcile(const HostTable& hosts, std::vector<Outgoing>& out) {
  TimePoint now = clock_.now();
  for (auto it = experiments_.begin(); it != experiments_.end();) {
    if (now - it->second.lastHeard > lease_) {
      logger_->warn("experiment silent: {} silent_ms={}; closing it",
                    logfields::experiment(it->first), toMillis(now - it->second.lastHeard));
      std::string name = it->first;
      ++it;
      (void)close(name, hosts, out);
      continue;
    }
    ++it;
  }
  for (auto& [name, record] : experiments_) {
    // Shrink: release the newest surplus workers (idle ones first).
    while (record.workers.size() > record.spec.workers) {
      auto victim = record.workers.begin();
      for (auto w = record.workers.begin(); w != record.workers.end(); ++w) {
        if (w->second.load.liveSessions < victim->second.load.liveSessions) victim = w;
      }
      if (auto host = hosts.find(victim->second.host); host != hosts.end()) {
        sendRelease(host->second, victim->first, out);
      }
      record.workers.erase(victim);
    }
    if (auto move = pickRebalanceMove(hostViews(hosts), record.spec, assigned(record))) {
      auto worker = record.workers.find(*move);
      if (auto host = hosts.find(worker->second.host); host != hosts.end()) {
        logger_->info("experiment worker moves: {} worker={:x} host={} idle, evening the spread",
                      logfields::experiment(name), *move, host->first.value);
        sendRelease(host->second, *move, out);
      }
      record.workers.erase(worker);
    }
    adoptReported(record, hosts);
    auto missing = static_cast<std::uint32_t>(record.spec.workers - record.workers.size());
    auto plan = planNewWorkers(hostViews(hosts), record.spec, assigned(record), missing);
    record.problem = plan.ok() ? "" : plan.status().message();
    if (plan.ok()) {
      for (WorkerId host : *plan) record.workers.emplace(ids_.next(), ExperimentWorkerState{host});
    }
    for (auto& [id, worker] : record.workers) {
      if (worker.ready || now - worker.createSent < 2 * interval_) continue;
      auto host = hosts.find(worker.host);
      if (host == hosts.end()) continue;
      sendCreate(host->second, record, id, out);
      worker.createSent = now;
    }
  }
}

void ExperimentBook::sampleUtilization(const HostTable& hosts) {
  for (auto& [name, record] : experiments_) {
    std::set<WorkerId> used;
    std::uint32_t busy = 0;
    for (const auto& [id, worker] : record.workers) {
      used.insert(worker.host);
      busy += worker.load.busySlots;
    }
    std::uint32_t slots = 0;
    for (WorkerId host : used) {
      if (auto found = hosts.find(host); found != hosts.end())
        slots += found->second.snapshot.slots;
    }
    record.utilization.push(slots == 0 ? 0.0f : static_cast<float>(busy) / slots);
  }
}

Result<ExperimentPlacement> ExperimentBook::place(const std::string& name,
                                                  const std::string& sessionType,
                                                  const HostTable& hosts, const AvoidList& avoid) {
  auto found = experiments_.find(name);
  if (found == experiments_.end()) {
    return notFound(fmt::format("no experiment named '{}' is open: open it first", name));
  }
  ExperimentRecord& record = found->second;
  record.lastHeard = clock_.now();
  if (!record.spec.sessionTypes.empty() &&
      std::find(record.spec.sessionTypes.begin(), record.spec.sessionTypes.end(), sessionType) ==
          record.spec.sessionTypes.end()) {
    return notFound(
        fmt::format("experiment '{}' does not run session type '{}'", name, sessionType));
  }
  // Reuse the session placement policy over the experiment's ready workers.
  TimePoint now = clock_.now();
  std::vector<WorkerSnapshot> candidates;
  for (auto& [id, worker] : record.workers) {
    auto host = hosts.find(worker.host);
    if (!worker.ready || host == hosts.end()) continue;
    if (avoid.covers(worker.host, host->second.endpoint)) continue;
    while (!worker.placements.empty() && now - worker.placements.front() > 2 * interval_) {
      worker.placements.pop_front();
    }
    std::uint32_t limit = host->second.snapshot.maxSessions;
    if (record.spec.maxSessions != 0) limit = std::min(limit, record.spec.maxSessions);
    candidates.push_back(WorkerSnapshot{
        WorkerId{id}, host->second.snapshot.sessionTypes, host->second.snapshot.slots, limit,
        worker.load.liveSessions, static_cast<std::uint32_t>(worker.placements.size()),
        worker.load.busySlots});
  }
  if (candidates.empty()) {
    return overloaded(fmt::format("experiment '{}' has no ready worker yet{}{}; retry shortly",
                                  name, record.problem.empty() ? "" : ": ", record.problem));
  }
  KILN_ASSIGN_OR_RETURN(WorkerId chosen, placeSession(candidates, sessionType));
  ExperimentWorkerState& worker = record.workers.at(chosen.value);
  worker.placements.push_back(now);
  const WorkerRecord& host = hosts.at(worker.host);
  return ExperimentPlacement{worker.host, host.endpoint, chosen.value};
}

}  // namespace kiln
