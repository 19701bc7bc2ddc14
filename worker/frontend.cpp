#include "worker/frontend.h"

namespace kiln {
namespace {

// This frontend's loop polls the waits of its one host.
HostLimits withLoopWaits(HostLimits limits) {
  limits.loopWaits = true;
  return limits;
}

class SingleHostFrontend final : public WorkerFrontend {
 public:
  explicit SingleHostFrontend(const FrontendParts& parts)
      : executor_(parts.pool),
        pool_(parts.pool),
        host_(parts.types, parts.cache, withLoopWaits(parts.limits), parts.clock, executor_,
              parts.replies, parts.completions, parts.logger) {}

  void handle(const std::string& routingId, InboundMessage message) override {
    host_.handle(routingId, std::move(message));
  }
  void onCompletion(Completion completion) override { host_.onCompletion(std::move(completion)); }
  void tick() override { host_.tick(); }
  void appendWaits(std::vector<LoopWait>& out) const override { host_.appendWaits(out); }
  void onWaitReady(const LoopWait& wait) override { host_.onWaitReady(wait.ticket); }
  LoadReport load() const override {
    HostLoad load = host_.load();
    return LoadReport{{load.liveSessions, pool_.busy(), load.waitingRequests, load.stepsTotal}, {}};
  }
  void clear() override { host_.clear(); }
  std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) override {
    return host_.dropSessionsOfClientsSilentSince(since, why);
  }

 private:
  PoolExecutor executor_;
  TaskPool& pool_;
  SessionHost host_;
};

}  // namespace

ServingMode plainWorkerMode() {
  return ServingMode{
      false, [] { return std::make_unique<FifoTaskQueue>(); },
      [](const FrontendParts& parts) { return std::make_unique<SingleHostFrontend>(parts); }};
}

}  // namespace kiln
