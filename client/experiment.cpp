// Client methods for experiments: open, status, wait, close (see client.h).
#include <fmt/format.h>

#include <thread>

#include <kiln/client/client.h>
#include "client/channel.h"
#include "client/lease_keeper.h"
#include "client/session_codec.h"
#include "common/types/underlying_wire.h"

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
  auto key = view.getKey();
  if (key.size() != 0) {
    auto secret = Secret::fromBytes({reinterpret_cast<const char*>(key.begin()), key.size()},
                                    "the experiment key");
    if (secret.ok()) status.key = secret->hex();
  }
  for (float sample : view.getUtilization()) status.utilization.push_back(sample);
  return status;
}

Secret Client::keyFor(const std::string& name) const {
  if (auto opened = opened_.find(name); opened != opened_.end()) return opened->second.key;
  if (name == identity_->experiment) return identity_->experimentKey;
  return {};
}

Result<ExperimentStatus> Client::openExperiment(const ExperimentSpec& spec) {
  capnp::MallocMessageBuilder builder(256);
  auto envelope = coordinator_->begin(builder, options_.requestTimeout);
  // Re-opening (a restarted coordinator, a spec update) presents the key.
  if (Secret key = keyFor(spec.name); !key.empty()) envelope.setExperimentKey(wireBytes(key));
  toWire(spec, envelope.initRequest().initOpenExperiment().initSpec());
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, coordinator_->call(builder, options_.requestTimeout));
  ExperimentStatus status = decodeExperiment(reply.envelope().getReply().getExperimentView());
  KILN_ASSIGN_OR_RETURN(Secret key, Secret::fromHex(status.key));
  opened_[spec.name] = Opened{spec, key};
  if (spec.name == identity_->experiment && identity_->experimentKey.bytes() != key.bytes()) {
    identity_->experimentKey = key;
    leases_->setExperimentKey(key);
  }
  return status;
}

Result<ExperimentStatus> Client::experimentStatus(const std::string& name) {
  capnp::MallocMessageBuilder builder(128);
  auto envelope = coordinator_->begin(builder, options_.requestTimeout);
  envelope.setExperimentKey(wireBytes(keyFor(name)));
  envelope.initRequest().initGetExperiment().setName(name);
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
  auto envelope = coordinator_->begin(builder, options_.requestTimeout);
  envelope.setExperimentKey(wireBytes(keyFor(name)));
  envelope.initRequest().initCloseExperiment().setName(name);
  opened_.erase(name);
  return coordinator_->call(builder, options_.requestTimeout).status();
}

}  // namespace kiln::client
