#include "nesting/in_process_backend.h"

#include <algorithm>

#include "nesting/fair_share.h"
#include "nesting/nesting_host.h"

namespace kiln::nesting {
namespace {

HostLimits limitsFor(const HostLimits& host, const UnderlyingSpec& spec) {
  HostLimits limits = host;
  if (spec.maxSessions != 0) limits.maxSessions = std::min(limits.maxSessions, spec.maxSessions);
  return limits;
}

}  // namespace

InProcessWorkers::InProcessWorkers(const FrontendParts& parts, UnderlyingDirectory& directory)
    : parts_(parts), directory_(directory), executor_(parts.pool) {}

InProcessWorkers::~InProcessWorkers() = default;

Status InProcessWorkers::create(const UnderlyingSpec& spec) {
  HostScope scope{spec.workerId, spec.experiment, spec.sessionTypes, spec.weight};
  workers_[spec.workerId].host = std::make_unique<SessionHost>(
      parts_.types, parts_.cache, limitsFor(parts_.limits, spec), parts_.clock, executor_,
      parts_.replies, parts_.completions, parts_.logger, std::move(scope));
  return okStatus();
}

void InProcessWorkers::release(const UnderlyingSpec& spec) {
  Worker& worker = workers_.at(spec.workerId);
  worker.sessionsAtRelease = worker.host->load().liveSessions;
  worker.host->retireAll();
  finishReleases();
}

void InProcessWorkers::finishReleases() {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> done;
  for (const auto& [id, record] : directory_.workers()) {
    if (!record.releasing) continue;
    Worker& worker = workers_.at(id);
    worker.host->retireAll();  // sessions that started meanwhile
    if (worker.host->inflight() == 0 && worker.host->load().liveSessions == 0) {
      done.emplace_back(id, worker.sessionsAtRelease);
    }
  }
  for (const auto& [id, sessionsEnded] : done) directory_.released(id, sessionsEnded);
}

void InProcessWorkers::forget(const UnderlyingSpec& spec, bool) { workers_.erase(spec.workerId); }

void InProcessWorkers::forward(const UnderlyingSpec& spec, const std::string& routingId,
                               InboundMessage message) {
  workers_.at(spec.workerId).host->handle(routingId, std::move(message));
}

void InProcessWorkers::keepAlive(ClientId client, const std::vector<std::uint64_t>& workers) {
  for (std::uint64_t id : workers) workers_.at(id).host->touchLease(client);
}

std::size_t InProcessWorkers::dropSessionsOfClientsSilentSince(TimePoint since,
                                                               const std::string& why) {
  std::size_t dropped = 0;
  for (auto& [id, worker] : workers_) {
    dropped += worker.host->dropSessionsOfClientsSilentSince(since, why);
  }
  return dropped;
}

void InProcessWorkers::setWeights(const std::map<std::string, std::uint32_t>& weights) {
  parts_.pool.withQueue([&](TaskQueue& queue) {
    // nestingHostMode() pairs this backend with a WeightedFairQueue.
    auto& fair = static_cast<WeightedFairQueue&>(queue);
    fair.forgetAllBut(weights);
    for (const auto& [experiment, weight] : weights) fair.setWeight(experiment, weight);
  });
}

LoadReport InProcessWorkers::load() const {
  LoadReport report;
  std::map<std::string, unsigned> running = parts_.pool.busyByKey();
  for (const auto& [id, record] : directory_.workers()) {
    if (record.releasing) continue;
    HostLoad load = workers_.at(id).host->load();
    // Running tasks are counted per experiment; hand them to its workers.
    unsigned& left = running[record.spec.experiment];
    unsigned busy = std::min<unsigned>(left, load.busySessions);
    left -= busy;
    report.underlying.push_back(UnderlyingStatus{
        record.spec, LoadFigures{load.liveSessions, busy, load.waitingRequests, load.stepsTotal}});
    report.total.liveSessions += load.liveSessions;
    report.total.queuedRequests += load.waitingRequests;
    report.total.stepsTotal += load.stepsTotal;
  }
  report.total.busySlots = parts_.pool.busy();
  return report;
}

void InProcessWorkers::onCompletion(Completion completion) {
  auto found = workers_.find(completion.target);
  if (found != workers_.end()) found->second.host->onCompletion(std::move(completion));
}

void InProcessWorkers::tick() {
  for (auto& [id, worker] : workers_) worker.host->tick();
  finishReleases();
}

void InProcessWorkers::clear() {
  for (auto& [id, worker] : workers_) worker.host->clear();
  workers_.clear();
}

ServingMode nestingHostMode() {
  return nestingMode<InProcessWorkers>([] { return std::make_unique<WeightedFairQueue>(); });
}

}  // namespace kiln::nesting
