#include "nesting/nesting_frontend.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/identity.h"
#include "nesting/fair_share.h"
#include "nesting/host_policy.h"

namespace kiln::nesting {

struct NestingFrontend::Underlying {
  UnderlyingSpec spec;
  std::unique_ptr<SessionHost> host;
  std::optional<PendingRelease> release;  // set while its sessions end
  std::uint32_t sessionsAtRelease = 0;
};

namespace {

HostLimits limitsFor(const HostLimits& host, const UnderlyingSpec& spec) {
  HostLimits limits = host;
  if (spec.maxSessions != 0) limits.maxSessions = std::min(limits.maxSessions, spec.maxSessions);
  return limits;
}

}  // namespace

NestingFrontend::NestingFrontend(const FrontendParts& parts)
    : parts_(parts),
      executor_(parts.pool),
      lobby_(parts.types, parts.cache, parts.limits, parts.clock, executor_, parts.replies,
             parts.completions, parts.logger) {}

NestingFrontend::~NestingFrontend() = default;

void NestingFrontend::reply(const std::string& routingId, std::uint64_t requestId,
                            const Status& status) {
  parts_.replies.send(routingId, encodeErrorReply(requestId, status));
}

void NestingFrontend::handle(const std::string& routingId, InboundMessage message) {
  std::uint64_t requestId = 0;
  try {
    auto envelope = message.envelope();
    requestId = envelope.getRequestId();
    if (Status version = checkProtocolVersion(envelope); !version.ok()) {
      return reply(routingId, requestId, version);
    }
    if (!envelope.isRequest()) {
      return reply(routingId, requestId, invalidArgument("a nesting host accepts only requests"));
    }
    std::uint64_t target = envelope.getTarget();
    if (target == 0) return handleHostRequest(routingId, std::move(message));
    auto found = workers_.find(target);
    std::string experiment = envelope.getExperiment().cStr();
    if (found == workers_.end() ||
        !visibleTo(found->second->spec, found->second->release.has_value(),
                   routingId == kCoordinatorRoute, experiment, envelope.getExperimentKey())) {
      return reply(routingId, requestId, unknownWorker(target, experiment));
    }
    found->second->host->handle(routingId, std::move(message));
  } catch (const kj::Exception& e) {
    reply(routingId, requestId,
          invalidArgument(fmt::format("malformed request: {}", e.getDescription().cStr())));
  }
}

void NestingFrontend::handleHostRequest(const std::string& routingId, InboundMessage message) {
  auto envelope = message.envelope();
  std::uint64_t requestId = envelope.getRequestId();
  std::string experiment = envelope.getExperiment().cStr();
  bool fromCoordinator = routingId == kCoordinatorRoute;
  auto request = envelope.getRequest();
  switch (request.which()) {
    case wire::Request::CREATE_WORKER:
      return createWorker(routingId, requestId, fromCoordinator,
                          fromWire(request.getCreateWorker().getSpec()));
    case wire::Request::RELEASE_WORKER:
      return releaseWorker(routingId, requestId, fromCoordinator,
                           request.getReleaseWorker().getWorkerId());
    case wire::Request::LIST_UNDERLYING:
      return listUnderlying(routingId, requestId, fromCoordinator, experiment,
                            envelope.getExperimentKey());
    case wire::Request::KEEP_ALIVE: {
      // One keep-alive refreshes the client's leases on every worker it may use.
      ClientId client = clientIdOf(envelope.getClientSecret());
      for (auto& [id, worker] : workers_) {
        if (client.valid() && visibleTo(worker->spec, worker->release.has_value(), false,
                                        experiment, envelope.getExperimentKey())) {
          worker->host->touchLease(client);
        }
      }
      return lobby_.handle(routingId, std::move(message));
    }
    default:
      if (auto refusal = refuseAtHost(request)) return reply(routingId, requestId, *refusal);
      return lobby_.handle(routingId, std::move(message));
  }
}

void NestingFrontend::createWorker(const std::string& routingId, std::uint64_t requestId,
                                   bool fromCoordinator, UnderlyingSpec spec) {
  if (Status valid = checkCreate(spec, fromCoordinator, parts_.types); !valid.ok()) {
    return reply(routingId, requestId, valid);
  }
  if (spec.workerId == 0) spec.workerId = ids_.next();
  auto existing = workers_.find(spec.workerId);
  if (existing != workers_.end()) {
    // Creating what exists is idempotent for its owner (the coordinator may
    // repeat a request whose answer it missed), an error for anyone else.
    if (existing->second->spec.experiment != spec.experiment ||
        existing->second->spec.keyDigest != spec.keyDigest || existing->second->release) {
      return reply(
          routingId, requestId,
          invalidArgument(fmt::format("underlying worker {:x} already exists", spec.workerId)));
    }
  } else {
    auto worker = std::make_unique<Underlying>();
    worker->spec = spec;
    HostScope scope{spec.workerId, spec.experiment, spec.sessionTypes, spec.weight};
    worker->host = std::make_unique<SessionHost>(
        parts_.types, parts_.cache, limitsFor(parts_.limits, spec), parts_.clock, executor_,
        parts_.replies, parts_.completions, parts_.logger, std::move(scope));
    workers_.emplace(spec.workerId, std::move(worker));
    updateWeights();
    parts_.logger->info("created underlying worker {:x} for experiment '{}' (weight {})",
                        spec.workerId, spec.experiment, spec.weight);
  }
  capnp::MallocMessageBuilder builder(64);
  initEnvelope(builder, requestId).initReply().initWorkerCreated().setWorkerId(spec.workerId);
  parts_.replies.send(routingId, encodeFrame(builder));
}

void NestingFrontend::releaseWorker(const std::string& routingId, std::uint64_t requestId,
                                    bool fromCoordinator, std::uint64_t workerId) {
  if (Status allowed = checkRelease(fromCoordinator); !allowed.ok()) {
    return reply(routingId, requestId, allowed);
  }
  auto found = workers_.find(workerId);
  if (found == workers_.end() || found->second->release.has_value()) {
    return reply(routingId, requestId, unknownWorker(workerId, ""));
  }
  Underlying& worker = *found->second;
  worker.release = PendingRelease{routingId, requestId};
  worker.sessionsAtRelease = worker.host->load().liveSessions;
  worker.host->retireAll();
  finishReleases();
}

void NestingFrontend::finishReleases() {
  bool released = false;
  for (auto it = workers_.begin(); it != workers_.end();) {
    Underlying& worker = *it->second;
    if (worker.release) worker.host->retireAll();  // sessions that started meanwhile
    if (!worker.release || worker.host->inflight() != 0 || worker.host->load().liveSessions != 0) {
      ++it;
      continue;
    }
    capnp::MallocMessageBuilder builder(64);
    initEnvelope(builder, worker.release->requestId)
        .initReply()
        .initWorkerReleased()
        .setSessionsEnded(worker.sessionsAtRelease);
    parts_.replies.send(worker.release->routingId, encodeFrame(builder));
    parts_.logger->info("released underlying worker {:x} of experiment '{}' ({} sessions ended)",
                        worker.spec.workerId, worker.spec.experiment, worker.sessionsAtRelease);
    it = workers_.erase(it);
    released = true;
  }
  if (released) updateWeights();
}

void NestingFrontend::updateWeights() {
  std::map<std::string, std::uint32_t> weights;
  for (const auto& [id, worker] : workers_) {
    weights[worker->spec.experiment] =
        std::max(weights[worker->spec.experiment], worker->spec.weight);
  }
  parts_.pool.withQueue([&](TaskQueue& queue) {
    // nestingHostMode() pairs this frontend with a WeightedFairQueue.
    auto& fair = static_cast<WeightedFairQueue&>(queue);
    fair.forgetAllBut(weights);
    for (const auto& [experiment, weight] : weights) fair.setWeight(experiment, weight);
  });
}

void NestingFrontend::listUnderlying(const std::string& routingId, std::uint64_t requestId,
                                     bool fromCoordinator, const std::string& experiment,
                                     capnp::Data::Reader key) {
  LoadReport report = load();
  std::erase_if(report.underlying, [&](const UnderlyingStatus& status) {
    return !visibleTo(status.spec, false, fromCoordinator, experiment, key);
  });
  capnp::MallocMessageBuilder builder;
  auto list = initEnvelope(builder, requestId)
                  .initReply()
                  .initUnderlyingView()
                  .initWorkers(report.underlying.size());
  for (unsigned i = 0; i < report.underlying.size(); ++i) toWire(report.underlying[i], list[i]);
  parts_.replies.send(routingId, encodeFrame(builder));
}

void NestingFrontend::onCompletion(Completion completion) {
  if (completion.target == 0) return lobby_.onCompletion(std::move(completion));
  auto found = workers_.find(completion.target);
  if (found != workers_.end()) found->second->host->onCompletion(std::move(completion));
}

void NestingFrontend::tick() {
  lobby_.tick();
  for (auto& [id, worker] : workers_) worker->host->tick();
  finishReleases();
}

LoadReport NestingFrontend::load() const {
  LoadReport report;
  std::map<std::string, unsigned> running = parts_.pool.busyByKey();
  for (const auto& [id, worker] : workers_) {
    if (worker->release) continue;
    HostLoad load = worker->host->load();
    // Running tasks are counted per experiment; hand them to its workers.
    unsigned& left = running[worker->spec.experiment];
    unsigned busy = std::min<unsigned>(left, load.busySessions);
    left -= busy;
    report.underlying.push_back(UnderlyingStatus{
        worker->spec, LoadFigures{load.liveSessions, busy, load.waitingRequests, load.stepsTotal}});
    report.total.liveSessions += load.liveSessions;
    report.total.queuedRequests += load.waitingRequests;
    report.total.stepsTotal += load.stepsTotal;
  }
  report.total.busySlots = parts_.pool.busy();
  return report;
}

void NestingFrontend::clear() {
  for (auto& [id, worker] : workers_) worker->host->clear();
  workers_.clear();
  lobby_.clear();
}

ServingMode nestingHostMode() {
  return ServingMode{
      true, [] { return std::make_unique<WeightedFairQueue>(); },
      [](const FrontendParts& parts) { return std::make_unique<NestingFrontend>(parts); }};
}

}  // namespace kiln::nesting
