#include "nesting/nesting_host.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/security/identity.h"
#include "common/types/underlying_wire.h"
#include "nesting/host_policy.h"

namespace kiln::nesting {

NestingHost::NestingHost(const FrontendParts& parts, const MakeBackend& makeBackend)
    : parts_(parts),
      executor_(parts.pool),
      lobby_(parts.types, parts.cache, parts.limits, parts.clock, executor_, parts.replies,
             parts.completions, parts.logger),
      backend_(makeBackend(parts, *this)) {}

NestingHost::~NestingHost() { backend_.reset(); }

void NestingHost::reply(const std::string& routingId, std::uint64_t requestId,
                        const Status& status) {
  parts_.replies.send(routingId, encodeErrorReply(requestId, status));
}

void NestingHost::handle(const std::string& routingId, InboundMessage message) {
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
        !visibleTo(found->second.spec, found->second.releasing, routingId == kCoordinatorRoute,
                   experiment, envelope.getExperimentPass())) {
      return reply(routingId, requestId, unknownWorker(target, experiment));
    }
    backend_->forward(found->second.spec, routingId, std::move(message));
  } catch (const kj::Exception& e) {
    reply(routingId, requestId,
          invalidArgument(fmt::format("malformed request: {}", e.getDescription().cStr())));
  }
}

std::vector<std::uint64_t> NestingHost::visibleWorkers(const std::string& experiment,
                                                       capnp::Data::Reader pass) const {
  std::vector<std::uint64_t> visible;
  for (const auto& [id, worker] : workers_) {
    if (visibleTo(worker.spec, worker.releasing, false, experiment, pass)) visible.push_back(id);
  }
  return visible;
}

void NestingHost::handleHostRequest(const std::string& routingId, InboundMessage message) {
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
                            envelope.getExperimentPass());
    case wire::Request::KEEP_ALIVE: {
      // One keep-alive refreshes the client's leases on every worker it may use.
      ClientId client = clientOf(envelope, parts_.limits.passKey);
      auto visible = visibleWorkers(experiment, envelope.getExperimentPass());
      if (client.valid() && !visible.empty()) backend_->keepAlive(client, visible);
      return lobby_.handle(routingId, std::move(message));
    }
    case wire::Request::ADD_BENCHMARK: {
      auto visible = visibleWorkers(experiment, envelope.getExperimentPass());
      if (!visible.empty()) backend_->addBenchmark(visible, message);
      return lobby_.handle(routingId, std::move(message));
    }
    default:
      if (auto refusal = refuseAtHost(request)) return reply(routingId, requestId, *refusal);
      return lobby_.handle(routingId, std::move(message));
  }
}

void NestingHost::createWorker(const std::string& routingId, std::uint64_t requestId,
                               bool fromCoordinator, UnderlyingSpec spec) {
  if (Status valid = checkCreate(spec, fromCoordinator, parts_.types); !valid.ok()) {
    return reply(routingId, requestId, valid);
  }
  if (Status usable = backend_->usable(); !usable.ok()) {
    return reply(routingId, requestId, usable);
  }
  if (spec.workerId == 0) spec.workerId = ids_.next();
  auto existing = workers_.find(spec.workerId);
  if (existing != workers_.end()) {
    // Creating what exists is idempotent for its owner (the coordinator may
    // repeat a request whose answer it missed), an error for anyone else.
    if (existing->second.spec.experiment != spec.experiment ||
        existing->second.spec.experimentPass != spec.experimentPass || existing->second.releasing) {
      return reply(
          routingId, requestId,
          invalidArgument(fmt::format("underlying worker {:x} already exists", spec.workerId)));
    }
  } else {
    if (Status created = backend_->create(spec); !created.ok()) {
      return reply(routingId, requestId, created);
    }
    workers_[spec.workerId] = UnderlyingRecord{spec, false};
    updateWeights();
    parts_.logger->info("created underlying worker {:x} for experiment '{}' (weight {})",
                        spec.workerId, spec.experiment, spec.weight);
  }
  capnp::MallocMessageBuilder builder(64);
  initEnvelope(builder, requestId).initReply().initWorkerCreated().setWorkerId(spec.workerId);
  parts_.replies.send(routingId, encodeFrame(builder));
}

void NestingHost::releaseWorker(const std::string& routingId, std::uint64_t requestId,
                                bool fromCoordinator, std::uint64_t workerId) {
  if (Status allowed = checkRelease(fromCoordinator); !allowed.ok()) {
    return reply(routingId, requestId, allowed);
  }
  auto found = workers_.find(workerId);
  if (found == workers_.end() || found->second.releasing) {
    return reply(routingId, requestId, unknownWorker(workerId, ""));
  }
  found->second.releasing = true;
  releases_[workerId] = PendingRelease{routingId, requestId};
  const UnderlyingSpec spec = found->second.spec;  // release() may complete and erase it
  backend_->release(spec);
}

void NestingHost::released(std::uint64_t workerId, std::uint32_t sessionsEnded) {
  auto found = workers_.find(workerId);
  auto pending = releases_.find(workerId);
  if (found == workers_.end() || !found->second.releasing || pending == releases_.end()) return;
  capnp::MallocMessageBuilder builder(64);
  initEnvelope(builder, pending->second.requestId)
      .initReply()
      .initWorkerReleased()
      .setSessionsEnded(sessionsEnded);
  parts_.replies.send(pending->second.routingId, encodeFrame(builder));
  const UnderlyingSpec spec = std::move(found->second.spec);
  parts_.logger->info("released underlying worker {:x} of experiment '{}' ({} sessions ended)",
                      workerId, spec.experiment, sessionsEnded);
  workers_.erase(found);
  releases_.erase(pending);
  const bool last = std::none_of(workers_.begin(), workers_.end(), [&](const auto& worker) {
    return worker.second.spec.experiment == spec.experiment;
  });
  backend_->forget(spec, last);
  updateWeights();
}

void NestingHost::updateWeights() {
  std::map<std::string, std::uint32_t> weights;
  for (const auto& [id, worker] : workers_) {
    weights[worker.spec.experiment] = std::max(weights[worker.spec.experiment], worker.spec.weight);
  }
  backend_->setWeights(weights);
}

void NestingHost::listUnderlying(const std::string& routingId, std::uint64_t requestId,
                                 bool fromCoordinator, const std::string& experiment,
                                 capnp::Data::Reader pass) {
  LoadReport report = load();
  std::erase_if(report.underlying, [&](const UnderlyingStatus& status) {
    return !visibleTo(status.spec, false, fromCoordinator, experiment, pass);
  });
  // A client is shown its workers, never the pass it proved (the coordinator
  // is told it, in heartbeats, to recognise its own workers).
  if (!fromCoordinator) {
    for (UnderlyingStatus& status : report.underlying) status.spec.experimentPass.clear();
  }
  capnp::MallocMessageBuilder builder;
  auto list = initEnvelope(builder, requestId)
                  .initReply()
                  .initUnderlyingView()
                  .initWorkers(report.underlying.size());
  for (unsigned i = 0; i < report.underlying.size(); ++i) toWire(report.underlying[i], list[i]);
  parts_.replies.send(routingId, encodeFrame(builder));
}

void NestingHost::onCompletion(Completion completion) {
  if (completion.target == 0) return lobby_.onCompletion(std::move(completion));
  backend_->onCompletion(std::move(completion));
}

void NestingHost::tick() {
  lobby_.tick();
  backend_->tick();
}

void NestingHost::clear() {
  backend_->clear();
  workers_.clear();
  releases_.clear();
  lobby_.clear();
}

}  // namespace kiln::nesting
