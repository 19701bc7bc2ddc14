// The nesting host's request handling: several underlying session-hosting
// workers in one process, each a SessionHost with an id and an owning
// experiment, all sharing the process's session types, contexts, benchmark
// cache and one pool whose queue shares the slots fairly by experiment weight.
//
// Addressing: Envelope.target names the underlying worker; target 0 is the
// host itself (version, spaces, keep-alive, worker parameters, and the
// control requests createWorker / releaseWorker / listUnderlying, of which
// only the coordinator may send the first two). A request for a worker
// without its experiment's name and key is answered exactly like one for an
// id that does not exist: clients cannot see other experiments. Requests
// that come down the coordinator link may address every worker.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/underlying_wire.h"
#include "worker/frontend.h"

namespace kiln::nesting {

class NestingFrontend final : public WorkerFrontend {
 public:
  explicit NestingFrontend(const FrontendParts& parts);
  ~NestingFrontend() override;

  void handle(const std::string& routingId, InboundMessage message) override;
  void onCompletion(Completion completion) override;
  void tick() override;
  LoadReport load() const override;
  void clear() override;

  // For tests and status.
  std::size_t underlyingCount() const { return workers_.size(); }

 private:
  struct Underlying;
  struct PendingRelease {
    std::string routingId;
    std::uint64_t requestId = 0;
  };

  void handleHostRequest(const std::string& routingId, InboundMessage message);
  void createWorker(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                    UnderlyingSpec spec);
  void releaseWorker(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                     std::uint64_t workerId);
  void listUnderlying(const std::string& routingId, std::uint64_t requestId, bool fromCoordinator,
                      const std::string& experiment, capnp::Data::Reader key);
  void finishReleases();
  void updateWeights();
  void reply(const std::string& routingId, std::uint64_t requestId, const Status& status);

  FrontendParts parts_;
  PoolExecutor executor_;
  SessionHost lobby_;  // target 0: host-level requests only, never sessions
  std::map<std::uint64_t, std::unique_ptr<Underlying>> workers_;
  RandomIds ids_;
};

// `kiln nest`: the weighted fair queue and this frontend.
ServingMode nestingHostMode();

}  // namespace kiln::nesting
