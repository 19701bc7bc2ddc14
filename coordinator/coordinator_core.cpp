#include "coordinator/coordinator_core.h"

#include <fmt/format.h>

#include <algorithm>

#include <kiln/version.h>
#include "common/base/wire_convert.h"

namespace kiln {

namespace {

constexpr std::size_t kMaxTextField = 1024;
constexpr std::size_t kMaxSessionTypes = 256;

void reply(std::vector<Outgoing>& out, const std::string& peer, capnp::MessageBuilder& builder) {
  out.push_back({peer, encodeFrame(builder)});
}

void replyError(std::vector<Outgoing>& out, const std::string& peer, std::uint64_t requestId,
                const Status& status) {
  out.push_back({peer, encodeErrorReply(requestId, status)});
}

// The client decides whether it is on the worker's host (it knows its own).
// Its pass there is good on that worker only: the worker never sees the
// secret the client showed us.
void setWorkerRoute(const WorkerRecord& worker, ClientId client,
                    wire::Placement::Builder placement) {
  placement.setLocalEndpoint(worker.localEndpoint);
  placement.setHostIdentity(worker.hostIdentity);
  // The client refuses a request over it before sending: a frame ZeroMQ
  // cuts would look to it like a lost worker (docs/security.md, Limits).
  placement.setMaxMessageBytes(worker.maxMessageBytes);
  if (client.valid()) {
    const ClientPass pass = clientPass(worker.passKey, client);
    placement.setClientPass(capnp::Data::Reader(pass.data(), pass.size()));
  }
}

}  // namespace

CoordinatorCore::CoordinatorCore(CoordinatorConfig config, const Clock& clock, Logger logger)
    : config_(std::move(config)),
      clock_(clock),
      logger_(std::move(logger)),
      experiments_(clock_, logger_, config_.heartbeatInterval, config_.experimentLease,
                   config_.experiments),
      nextWorkerId_(std::max<std::uint64_t>(config_.firstWorkerId, 1)) {}

void CoordinatorCore::handle(const std::string& peer, const InboundMessage& message,
                             std::vector<Outgoing>& out) {
  auto envelope = message.envelope();
  std::uint64_t requestId = 0;
  try {
    requestId = envelope.getRequestId();
    Status version = checkProtocolVersion(envelope);
    if (!version.ok()) {
      logger_->warn("refused a peer speaking protocol {}", envelope.getProtocolVersion());
      return replyError(out, peer, requestId, version);
    }
    auto known = byPeer_.find(peer);
    if (known != byPeer_.end()) {
      WorkerRecord& worker = workers_.at(known->second);
      worker.lastHeard = clock_.now();  // any message counts as a heartbeat
      if (envelope.isHeartbeat()) return recordHeartbeat(worker, envelope.getHeartbeat(), out);
      if (envelope.isReply()) {
        // Answers to createWorker/releaseWorker: heartbeats confirm success.
        if (envelope.getReply().isError()) {
          logger_->warn("host {} refused a request: {}", worker.endpoint,
                        fromWire(envelope.getReply().getError()).toString());
        }
        return;
      }
    } else if (envelope.isHeartbeat()) {
      // Majordomo's DISCONNECT: a worker we do not know (we restarted, or we
      // declared it lost) must register again on a fresh socket.
      capnp::MallocMessageBuilder builder(128);
      toWire(permissionDenied("this coordinator does not know you: register again"),
             initEnvelope(builder, 0).initDisconnect());
      return reply(out, peer, builder);
    }
    if (envelope.isRequest() && envelope.getRequest().isRegisterWorker() &&
        message.peerKey() == PeerKey::kAuthorizedClient) {
      // A worker gets the cluster's clients' programs: only a holder of the
      // cluster key may be one, not an extra client key.
      logger_->warn("refused a registration from a peer with an authorized client key");
      return replyError(
          out, peer, requestId,
          permissionDenied("only the cluster key (--key-file) registers workers and nesting "
                           "hosts; this peer holds an extra client key (--authorized-keys)"));
    }
    if (envelope.isRequest()) return handleRequest(peer, envelope, out);
  } catch (const kj::Exception& e) {
    replyError(out, peer, requestId,
               invalidArgument(fmt::format("malformed message: {}", e.getDescription().cStr())));
  }
}

void CoordinatorCore::recordHeartbeat(WorkerRecord& worker, wire::Heartbeat::Reader heartbeat,
                                      std::vector<Outgoing>& out) {
  LoadFigures load = fromWire(heartbeat.getLoad());
  worker.snapshot.liveSessions = load.liveSessions;
  worker.snapshot.busySlots = load.busySlots;
  worker.queuedRequests = load.queuedRequests;
  worker.stepsTotal = load.stepsTotal;
  worker.utilization.push(static_cast<float>(load.busySlots) /
                          std::max<std::uint32_t>(worker.snapshot.slots, 1));
  worker.reportBefore = worker.lastReport;
  worker.lastReport = clock_.now();
  if (!worker.nesting) {
    // Counted twice no longer: the report holds what was placed before the last one.
    prunePlacements(worker, worker.lastReport);
    return reindex(worker);
  }
  worker.underlying.clear();
  for (auto status : heartbeat.getUnderlying()) worker.underlying.push_back(fromWire(status));
  experiments_.onHostReport(worker, out);
}

void CoordinatorCore::handleRequest(const std::string& peer, wire::Envelope::Reader envelope,
                                    std::vector<Outgoing>& out) {
  std::uint64_t requestId = envelope.getRequestId();
  auto request = envelope.getRequest();
  switch (request.which()) {
    case wire::Request::REGISTER_WORKER:
      return registerWorker(peer, requestId, request.getRegisterWorker(), out);
    case wire::Request::LIST_CLUSTER:
      return listCluster(peer, requestId, envelope.getExperiment().cStr(), out);
    case wire::Request::PLACE: {
      auto asked = request.getPlace();
      if (asked.hasWorker()) {
        return placeNamed(peer, requestId, asked.getWorker().cStr(), clientIds_.of(envelope), out);
      }
      if (asked.getAvoid().size() + asked.getAvoidWorkers().size() > AvoidList::kMaxEntries) {
        return replyError(out, peer, requestId,
                          invalidArgument(fmt::format("a placement may avoid at most {} workers",
                                                      AvoidList::kMaxEntries)));
      }
      AvoidList avoid;
      for (auto endpoint : asked.getAvoid()) avoid.endpoints.emplace(endpoint.cStr());
      for (std::uint64_t worker : asked.getAvoidWorkers()) avoid.workers.insert(worker);
      // A URI longer than any benchmark's is no hint worth remembering.
      auto benchmark = asked.getBenchmark();
      return place(peer, requestId, asked.getSessionType().cStr(),
                   benchmark.size() <= kMaxTextField ? benchmark.cStr() : "",
                   envelope.getExperiment().cStr(), envelope.getExperimentKey(),
                   clientIds_.of(envelope), avoid, out);
    }
    case wire::Request::OPEN_EXPERIMENT:
    case wire::Request::CLOSE_EXPERIMENT:
    case wire::Request::GET_EXPERIMENT:
    case wire::Request::KEEP_ALIVE:
      return handleExperimentRequest(peer, envelope, out);
    case wire::Request::GET_VERSION: {
      capnp::MallocMessageBuilder builder(128);
      auto version = initEnvelope(builder, requestId).initReply().initVersion();
      version.setProtocolVersion(wire::PROTOCOL_VERSION);
      version.setServiceVersion(std::string("kiln coordinator ") + kKilnVersion);
      return reply(out, peer, builder);
    }
    default:
      return replyError(out, peer, requestId,
                        invalidArgument("the coordinator hosts no sessions: ask it for a "
                                        "placement, then send session requests to that worker"));
  }
}

void CoordinatorCore::registerWorker(const std::string& peer, std::uint64_t requestId,
                                     wire::RegisterWorker::Reader request,
                                     std::vector<Outgoing>& out) {
  std::string endpoint = request.getEndpoint().cStr();
  auto types = request.getSessionTypes();
  if (endpoint.empty() || endpoint.size() > kMaxTextField) {
    return replyError(out, peer, requestId, invalidArgument("registration needs an endpoint"));
  }
  if (request.getLocalEndpoint().size() > kMaxTextField ||
      request.getHostIdentity().size() > kMaxTextField) {
    return replyError(
        out, peer, requestId,
        invalidArgument("registration's local endpoint or host identity is too long"));
  }
  if (request.getSlots() == 0 || types.size() == 0 || types.size() > kMaxSessionTypes) {
    return replyError(out, peer, requestId,
                      invalidArgument("registration needs at least one slot and session type"));
  }
  if (!config_.workerToken.empty() && !tokenMatches(request.getToken(), config_.workerToken)) {
    // A worker is given clients' programs and sessions: only the operator's.
    logger_->warn("refused the registration of {} ({}): {} worker token", endpoint,
                  request.getHostname().cStr(), request.hasToken() ? "a wrong" : "no");
    return replyError(
        out, peer, requestId,
        permissionDenied(fmt::format(
            "this coordinator registers only workers and nesting hosts that present its worker "
            "token; this one presented {}: give both the same --worker-token-file (default "
            "$XDG_CONFIG_HOME/kiln/worker-token or ~/.config/kiln/worker-token)",
            request.hasToken() ? "another token" : "none")));
  }
  auto passKey = PassKey::fromWire(request.getPassKey());
  if (!passKey.ok()) {
    return replyError(out, peer, requestId,
                      invalidArgument(fmt::format("registration needs the worker's pass key: {}",
                                                  passKey.status().message())));
  }
  if (auto known = byPeer_.find(peer); known != byPeer_.end()) {
    // The same socket registers again: replace its record.
    const WorkerId same = known->second;
    byPeer_.erase(known);
    if (auto at = byEndpoint_.find(workers_.at(same).endpoint);
        at != byEndpoint_.end() && at->second == same) {
      byEndpoint_.erase(at);
    }
    placementIndex_.remove(same);
    workers_.erase(same);
  }
  if (auto before = byEndpoint_.find(endpoint); before != byEndpoint_.end()) {
    // One process listens at an endpoint: a registration there from another
    // connection is a replacement (started again after a crash), so its
    // predecessor is gone. It goes now, not a liveness window later: until
    // then it would take placements that fail (or, for a nesting host,
    // keep an experiment's workers planned on a process that is no more).
    logger_->warn("worker {} ({}) is replaced by a new registration at its endpoint",
                  before->second.value, endpoint);
    forgetWorker(before->second);
  }
  WorkerId id{nextWorkerId_++};
  WorkerRecord worker;
  worker.snapshot.id = id;
  worker.nesting = request.getNesting();
  for (auto type : types) worker.snapshot.sessionTypes.emplace_back(type.cStr());
  worker.snapshot.slots = request.getSlots();
  worker.snapshot.maxSessions = request.getMaxSessions();
  worker.routingId = peer;
  worker.endpoint = endpoint;
  worker.localEndpoint = request.getLocalEndpoint().cStr();
  worker.hostIdentity = request.getHostIdentity().cStr();
  worker.version = request.getVersion().cStr();
  worker.hostname = request.getHostname().cStr();
  worker.pid = request.getPid();
  worker.passKey = *passKey;
  worker.maxMessageBytes = request.getMaxMessageBytes();
  worker.lastHeard = clock_.now();
  worker.nextPing = worker.lastHeard + config_.heartbeatInterval;
  logger_->info("worker {} registered: {} on {} ({} slots, types {})", id.value, endpoint,
                worker.hostname, worker.snapshot.slots,
                fmt::join(worker.snapshot.sessionTypes, ", "));
  for (auto status : request.getUnderlying()) worker.underlying.push_back(fromWire(status));
  WorkerRecord& record = workers_.emplace(id, std::move(worker)).first->second;
  byPeer_[peer] = id;
  byEndpoint_[endpoint] = id;
  reindex(record);

  capnp::MallocMessageBuilder builder(128);
  auto registered = initEnvelope(builder, requestId).initReply().initRegistered();
  registered.setWorkerId(id.value);
  registered.setHeartbeatIntervalMs(
      static_cast<std::uint32_t>(toMillis(config_.heartbeatInterval)));
  reply(out, peer, builder);
  // After the answer: what the host already runs may be claimed (or released).
  if (record.nesting) experiments_.onHostReport(record, out);
}

std::map<WorkerId, WorkerRecord>::iterator CoordinatorCore::forgetWorker(WorkerId id) {
  auto found = workers_.find(id);
  byPeer_.erase(found->second.routingId);
  if (auto at = byEndpoint_.find(found->second.endpoint);
      at != byEndpoint_.end() && at->second == id) {
    byEndpoint_.erase(at);
  }
  placementIndex_.remove(id);
  experiments_.onHostLost(id);
  ++workersLost_;
  return workers_.erase(found);
}

void CoordinatorCore::prunePlacements(WorkerRecord& worker, TimePoint now) {
  // A placement shows up in the worker's own count within two heartbeats,
  // and is in it once a report came a whole report after it.
  while (!worker.placements.empty() &&
         (now - worker.placements.front() > 2 * config_.heartbeatInterval ||
          worker.placements.front() < worker.reportBefore)) {
    worker.placements.pop_front();
  }
  const auto placed = static_cast<std::uint32_t>(worker.placements.size());
  if (placed == worker.snapshot.placedSessions) return;
  worker.snapshot.placedSessions = placed;
  reindex(worker);
}

void CoordinatorCore::expirePlacements(TimePoint now) {
  while (!placementLog_.empty() &&
         now - placementLog_.front().first > 2 * config_.heartbeatInterval) {
    auto worker = workers_.find(placementLog_.front().second);
    placementLog_.pop_front();
    if (worker != workers_.end()) prunePlacements(worker->second, now);
  }
}

void CoordinatorCore::reindex(const WorkerRecord& worker) {
  // Nesting hosts serve sessions only through experiments' workers.
  if (!worker.nesting) placementIndex_.upsert(worker.snapshot);
}

void CoordinatorCore::listCluster(const std::string& peer, std::uint64_t requestId,
                                  const std::string& experiment, std::vector<Outgoing>& out) {
  // A client of an experiment sees only its own experiment's workers; an
  // operator (no experiment) sees everything.
  auto visible = [&](const std::string& owner) {
    return experiment.empty() || owner == experiment;
  };
  TimePoint now = clock_.now();
  capnp::MallocMessageBuilder builder;
  auto view = initEnvelope(builder, requestId).initReply().initClusterView();
  auto list = view.initWorkers(workers_.size());
  unsigned i = 0;
  for (auto& [id, worker] : workers_) {
    prunePlacements(worker, now);
    auto info = list[i++];
    info.setWorkerId(id.value);
    info.setEndpoint(worker.endpoint);
    info.setLocalEndpoint(worker.localEndpoint);
    info.setHostIdentity(worker.hostIdentity);
    info.setSlots(worker.snapshot.slots);
    info.setMaxSessions(worker.snapshot.maxSessions);
    auto types = info.initSessionTypes(worker.snapshot.sessionTypes.size());
    for (unsigned t = 0; t < types.size(); ++t) types.set(t, worker.snapshot.sessionTypes[t]);
    info.setVersion(worker.version);
    info.setHostname(worker.hostname);
    info.setPid(worker.pid);
    auto load = info.initLoad();
    load.setLiveSessions(worker.snapshot.liveSessions);
    load.setBusySlots(worker.snapshot.busySlots);
    load.setQueuedRequests(worker.queuedRequests);
    load.setStepsTotal(worker.stepsTotal);
    info.setMsSinceHeard(static_cast<std::uint32_t>(toMillis(now - worker.lastHeard)));
    info.setPlacedSessions(worker.snapshot.placedSessions);
    info.setNesting(worker.nesting);
    std::vector<const UnderlyingStatus*> shown;
    for (const UnderlyingStatus& status : worker.underlying) {
      if (visible(status.spec.experiment)) shown.push_back(&status);
    }
    auto underlying = info.initUnderlying(shown.size());
    for (unsigned u = 0; u < shown.size(); ++u) {
      // A view never carries an experiment's pass: it is what opens the host.
      UnderlyingStatus status = *shown[u];
      status.spec.experimentPass.clear();
      toWire(status, underlying[u]);
    }
    const auto& samples = worker.utilization.samples();
    auto utilization = info.initUtilization(samples.size());
    for (unsigned u = 0; u < samples.size(); ++u) utilization.set(u, samples[u]);
  }
  std::vector<const ExperimentRecord*> experiments;
  for (const auto& [name, record] : experiments_.experiments()) {
    if (visible(name)) experiments.push_back(&record);
  }
  auto experimentList = view.initExperiments(experiments.size());
  for (unsigned e = 0; e < experiments.size(); ++e) {
    writeExperimentView(*experiments[e], experimentList[e]);
  }
  reply(out, peer, builder);
}

void CoordinatorCore::place(const std::string& peer, std::uint64_t requestId,
                            const std::string& sessionType, const std::string& benchmark,
                            const std::string& experiment, capnp::Data::Reader experimentKey,
                            ClientId client, const AvoidList& avoid, std::vector<Outgoing>& out) {
  if (!experiment.empty()) {
    if (Status allowed = experiments_.authorize(experiment, experimentKey); !allowed.ok()) {
      return replyError(out, peer, requestId, allowed);
    }
    auto placed = experiments_.place(experiment, sessionType, workers_, avoid);
    if (!placed.ok()) return replyError(out, peer, requestId, placed.status());
    ++placements_;
    capnp::MallocMessageBuilder builder(128);
    auto placement = initEnvelope(builder, requestId).initReply().initPlacement();
    placement.setWorkerId(placed->host.value);
    placement.setEndpoint(placed->endpoint);
    placement.setTarget(placed->target);
    setWorkerRoute(workers_.at(placed->host), client, placement);
    return reply(out, peer, builder);
  }
  const TimePoint now = clock_.now();
  expirePlacements(now);
  auto avoided = [&](WorkerId id) {
    return !avoid.empty() && avoid.covers(id, workers_.at(id).endpoint);
  };
  std::vector<WorkerId> warm;
  if (!benchmark.empty() && config_.cacheAffinitySlack > 0) warm = affinity_.hostsOf(benchmark);
  auto choice = placementIndex_.placeNear(sessionType, warm, config_.cacheAffinitySlack, avoided);
  if (!choice.ok()) return replyError(out, peer, requestId, choice.status());
  const WorkerId chosen = choice->worker;
  if (!benchmark.empty()) affinity_.remember(benchmark, chosen);
  ++placements_;
  if (choice->preferred) ++affinityPlacements_;
  WorkerRecord& worker = workers_.at(chosen);
  worker.placements.push_back(now);
  worker.snapshot.placedSessions = static_cast<std::uint32_t>(worker.placements.size());
  placementLog_.emplace_back(now, chosen);
  reindex(worker);
  capnp::MallocMessageBuilder builder(128);
  auto placement = initEnvelope(builder, requestId).initReply().initPlacement();
  placement.setWorkerId(chosen.value);
  placement.setEndpoint(worker.endpoint);
  setWorkerRoute(worker, client, placement);
  reply(out, peer, builder);
}

void CoordinatorCore::placeNamed(const std::string& peer, std::uint64_t requestId,
                                 const std::string& endpoint, ClientId client,
                                 std::vector<Outgoing>& out) {
  auto known = byEndpoint_.find(endpoint);
  if (known == byEndpoint_.end()) {
    return replyError(out, peer, requestId,
                      notFound(fmt::format("no worker is registered at '{}' (kiln status lists "
                                           "the cluster's workers)",
                                           endpoint)));
  }
  const WorkerRecord& worker = workers_.at(known->second);
  if (worker.nesting) {
    return replyError(out, peer, requestId,
                      invalidArgument(fmt::format("'{}' is a nesting host: its workers are "
                                                  "reached through their experiment",
                                                  endpoint)));
  }
  capnp::MallocMessageBuilder builder(128);
  auto placement = initEnvelope(builder, requestId).initReply().initPlacement();
  placement.setWorkerId(known->second.value);
  placement.setEndpoint(worker.endpoint);
  setWorkerRoute(worker, client, placement);
  reply(out, peer, builder);
}

void CoordinatorCore::tick(std::vector<Outgoing>& out) {
  TimePoint now = clock_.now();
  // The loop ticks after every burst of messages; the workers' timers are
  // looked at a few times per interval, not once per message: a scan of
  // thousands of hosts per placement would cost more than the placement.
  if (now < nextScan_) return;
  nextScan_ =
      now + std::max<Duration>(config_.heartbeatInterval / 20, std::chrono::milliseconds(1));
  expirePlacements(now);
  for (auto it = workers_.begin(); it != workers_.end();) {
    WorkerRecord& worker = it->second;
    if (now - worker.lastHeard > config_.heartbeatInterval * config_.liveness) {
      logger_->warn("worker {} ({}) lost: silent for {} ms; its capacity is removed",
                    it->first.value, worker.endpoint, toMillis(now - worker.lastHeard));
      it = forgetWorker(it->first);
      continue;
    }
    if (now >= worker.nextPing) {
      worker.nextPing = now + config_.heartbeatInterval;
      capnp::MallocMessageBuilder builder(64);
      initEnvelope(builder, 0).initHeartbeat().setWorkerId(it->first.value);
      reply(out, worker.routingId, builder);
    }
    ++it;
  }
  if (now >= nextReconcile_) {
    nextReconcile_ = now + config_.heartbeatInterval;
    experiments_.reconcile(workers_, out);
    experiments_.sampleUtilization(workers_);
  }
}

void CoordinatorCore::handleExperimentRequest(const std::string& peer,
                                              wire::Envelope::Reader envelope,
                                              std::vector<Outgoing>& out) {
  std::uint64_t requestId = envelope.getRequestId();
  auto request = envelope.getRequest();
  std::string name = envelope.getExperiment().cStr();
  capnp::Data::Reader key = envelope.getExperimentKey();
  // What the caller may do is decided by the key it presents, never by the
  // name it writes: the name only says which experiment it means.
  switch (request.which()) {
    case wire::Request::OPEN_EXPERIMENT: {
      ExperimentSpec spec = fromWire(request.getOpenExperiment().getSpec());
      if (!name.empty() && name != spec.name) {
        return replyError(out, peer, requestId,
                          invalidArgument(fmt::format("Envelope.experiment '{}' and the spec's "
                                                      "name '{}' differ",
                                                      name, spec.name)));
      }
      name = spec.name;
      Result<Secret> opened =
          experiments_.open(std::move(spec), key, clientIdOf(envelope.getClientSecret()));
      if (!opened.ok()) return replyError(out, peer, requestId, opened.status());
      experiments_.reconcile(workers_, out);  // create its workers now, not at the next tick
      const ExperimentRecord* record = experiments_.find(name);
      if (record == nullptr) {
        return replyError(out, peer, requestId,
                          internalError(fmt::format("experiment '{}' vanished on open", name)));
      }
      return replyExperiment(peer, requestId, *record, out, &*opened);
    }
    case wire::Request::CLOSE_EXPERIMENT: {
      std::string target = request.getCloseExperiment().getName().cStr();
      if (Status allowed = experiments_.authorize(target, key); !allowed.ok()) {
        return replyError(out, peer, requestId, allowed);
      }
      if (Status closed = experiments_.close(target, workers_, out); !closed.ok()) {
        return replyError(out, peer, requestId, closed);
      }
      capnp::MallocMessageBuilder builder(64);
      initEnvelope(builder, requestId).initReply().setKeptAlive();
      return reply(out, peer, builder);
    }
    case wire::Request::KEEP_ALIVE: {
      if (Status allowed = experiments_.authorize(name, key); !allowed.ok()) {
        return replyError(out, peer, requestId, allowed);
      }
      experiments_.touch(name);
      capnp::MallocMessageBuilder builder(64);
      initEnvelope(builder, requestId).initReply().setKeptAlive();
      return reply(out, peer, builder);
    }
    default: {
      name = request.getGetExperiment().getName().cStr();
      if (Status allowed = experiments_.authorize(name, key); !allowed.ok()) {
        return replyError(out, peer, requestId, allowed);
      }
      experiments_.touch(name);
      return replyExperiment(peer, requestId, *experiments_.find(name), out);
    }
  }
}

void CoordinatorCore::replyExperiment(const std::string& peer, std::uint64_t requestId,
                                      const ExperimentRecord& experiment,
                                      std::vector<Outgoing>& out, const Secret* key) {
  capnp::MallocMessageBuilder builder;
  auto view = initEnvelope(builder, requestId).initReply().initExperimentView();
  writeExperimentView(experiment, view);
  if (key != nullptr) view.setKey(wireBytes(*key));
  reply(out, peer, builder);
}

void CoordinatorCore::writeExperimentView(const ExperimentRecord& experiment,
                                          wire::ExperimentView::Builder view) {
  toWire(experiment.spec, view.initSpec());
  auto workers = view.initWorkers(experiment.workers.size());
  unsigned i = 0;
  for (const auto& [id, worker] : experiment.workers) {
    auto out = workers[i++];
    out.setWorkerId(id);
    out.setHostId(worker.host.value);
    if (auto host = workers_.find(worker.host); host != workers_.end()) {
      out.setEndpoint(host->second.endpoint);
    }
    out.setReady(worker.ready);
    toWire(worker.load, out.initLoad());
  }
  view.setMsSinceHeard(static_cast<std::uint32_t>(toMillis(clock_.now() - experiment.lastHeard)));
  const auto& samples = experiment.utilization.samples();
  auto utilization = view.initUtilization(samples.size());
  for (unsigned u = 0; u < samples.size(); ++u) utilization.set(u, samples[u]);
}

}  // namespace kiln
