// A nesting host's request handling: several underlying session-hosting
// workers behind one endpoint, each with an id and an owning experiment, run
// by a backend (nesting/underlying_backend.h): in this process, or in a child
// process per experiment.
//
// Addressing, the same whatever the backend: Envelope.target names the
// underlying worker; target 0 is the host itself (version, spaces,
// keep-alive, worker parameters, and the control requests createWorker /
// releaseWorker / listUnderlying, of which only the coordinator may send the
// first two). A request for a worker without its experiment's name and pass
// for this host is answered exactly like one for an id that does not exist: clients cannot
// see other experiments. Requests that come down the coordinator link may
// address every worker. The rules themselves are pure functions
// (nesting/host_policy.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "nesting/underlying_backend.h"
#include "worker/frontend.h"

namespace kiln::nesting {

class NestingHost final : public WorkerFrontend, private UnderlyingDirectory {
 public:
  using MakeBackend =
      std::function<std::unique_ptr<UnderlyingBackend>(const FrontendParts&, UnderlyingDirectory&)>;
  NestingHost(const FrontendParts& parts, const MakeBackend& makeBackend);
  ~NestingHost() override;

  void handle(const std::string& routingId, InboundMessage message) override;
  void onCompletion(Completion completion) override;
  void tick() override;
  LoadReport load() const override { return backend_->load(); }
  std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) override {
    // The lobby hosts no sessions: they all live on underlying workers.
    return backend_->dropSessionsOfClientsSilentSince(since, why);
  }
  void clear() override;
  void stopCleanly(Duration within) override { backend_->stopCleanly(within); }
  zmq::socket_t* socket() override { return backend_->socket(); }
  void onSocketReadable() override { backend_->onSocketReadable(); }

  // For tests and status.
  std::size_t underlyingCount() const { return workers_.size(); }

 private:
  struct PendingRelease {
    std::string routingId;
    std::uint64_t requestId = 0;
  };

  const std::map<std::uint64_t, UnderlyingRecord>& workers() const override { return workers_; }
  void released(std::uint64_t workerId, std::uint32_t sessionsEnded) override;

  void handleHostRequest(const std::string& routingId, InboundMessage message);
  void createWorker(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                    UnderlyingSpec spec);
  void releaseWorker(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                     std::uint64_t workerId);
  void listUnderlying(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                      const std::string& experiment, capnp::Data::Reader pass);
  // The workers a client acting for `experiment` with `pass` may use.
  std::vector<std::uint64_t> visibleWorkers(const std::string& experiment,
                                            capnp::Data::Reader pass) const;
  void updateWeights();
  void reply(const std::string& routingId, std::uint64_t requestId, const Status& status);

  FrontendParts parts_;
  PoolExecutor executor_;
  SessionHost lobby_;  // target 0: host-level requests only, never sessions
  std::map<std::uint64_t, UnderlyingRecord> workers_;
  std::map<std::uint64_t, PendingRelease> releases_;
  RandomIds ids_;
  std::unique_ptr<UnderlyingBackend> backend_;  // first to go: it may still ask the above
};

// The serving mode of a nesting host whose workers run on `Backend`
// (constructible from the frontend's parts and the host's directory), with
// the pool's queue from `makeQueue`.
template <class Backend>
ServingMode nestingMode(std::function<std::unique_ptr<TaskQueue>()> makeQueue) {
  return ServingMode{true, std::move(makeQueue), [](const FrontendParts& parts) {
                       return std::make_unique<NestingHost>(
                           parts, [](const FrontendParts& p, UnderlyingDirectory& directory) {
                             return std::make_unique<Backend>(p, directory);
                           });
                     }};
}

}  // namespace kiln::nesting
