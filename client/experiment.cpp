// Client methods for experiments: open, status, wait, close (see client.h).
#include <fmt/format.h>

#include <thread>

#include "client/client.h"
#include "client/session_codec.h"

namespace kiln::client {

std::size_t ExperimentStatus::readyWorkers() const {
  return static_cast<std::size_t>(
      std::count_if(workers.begin(), workers.end(), [](const auto& w) { return w.ready; }));
}

ExperimentStatus decodeExperiment(wire::ExperimentView::Reader view) {
  ExperimentStatus status;
  status.spec = fromWire(view.getSpec());
  for (auto worker : view.getWorkers()) {
    status.workers.push_back(ExperimentWorker{worker.getWorkerId(), worker.getHostId(),
                                              worker.getEndpoint().cStr(), worker.getReady(),
                                              fromWire(worker.getLoad())});
  }
  status.msSinceHeard = view.getMsSinceHeard();
  for (float sample : view.getUtilization()) status.utilization.push_back(sample);
  return status;
}

Result<ExperimentStatus> Client::openExperiment(const ExperimentSpec& spec) {
  capnp::MallocMessageBuilder builder(256);
  toWire(spec, coordinator_->begin(builder, options_.requestTimeout)
                   .initRequest()
                   .initOpenExperiment()
                   .initSpec());
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, coordinator_->call(builder, options_.requestTimeout));
  opened_[spec.name] = spec;
  return decodeExperiment(reply.envelope().getReply().getExperimentView());
}

Result<ExperimentStatus> Client::experimentStatus(const std::string& name) {
  capnp::MallocMessageBuilder builder(128);
  coordinator_->begin(builder, options_.requestTimeout)
      .initRequest()
      .initGetExperiment()
      .setName(name);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, coordinator_->call(builder, options_.requestTimeout));
  return decodeExperiment(reply.envelope().getReply().getExperimentView());
}

Result<ExperimentStatus> Client::waitForExperiment(const std::string& name, std::uint32_t workers,
                                                   Duration timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    KILN_ASSIGN_OR_RETURN(ExperimentStatus status, experimentStatus(name));
    if (status.readyWorkers() >= workers) return status;
    if (std::chrono::steady_clock::now() >= deadline) {
      return timeoutError(
          fmt::format("experiment '{}' has {} of {} workers ready after {} ms "
                      "(are nesting hosts registered? `kiln status` shows them)",
                      name, status.readyWorkers(), workers, toMillis(timeout)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Client::closeExperiment(const std::string& name) {
  capnp::MallocMessageBuilder builder(128);
  coordinator_->begin(builder, options_.requestTimeout)
      .initRequest()
      .initCloseExperiment()
      .setName(name);
  opened_.erase(name);
  return coordinator_->call(builder, options_.requestTimeout).status();
}

}  // namespace kiln::client
