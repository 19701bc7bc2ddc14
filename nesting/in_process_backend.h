// `kiln nest`: a nesting host whose underlying workers run in its own
// process, each a SessionHost with an id and an owning experiment, all
// sharing the process's session types, contexts, benchmark cache and one
// pool whose queue shares the slots fairly by experiment weight.
#pragma once

#include <map>
#include <memory>

#include "nesting/underlying_backend.h"

namespace kiln::nesting {

class InProcessWorkers final : public UnderlyingBackend {
 public:
  InProcessWorkers(const FrontendParts& parts, UnderlyingDirectory& directory);
  ~InProcessWorkers() override;

  Status create(const UnderlyingSpec& spec) override;
  void release(const UnderlyingSpec& spec) override;
  void forget(const UnderlyingSpec& spec, bool lastOfExperiment) override;
  void forward(const UnderlyingSpec& spec, const std::string& routingId,
               InboundMessage message) override;
  void keepAlive(ClientId client, const std::vector<std::uint64_t>& workers) override;
  void addBenchmark(const std::vector<std::uint64_t>&, const InboundMessage&) override {
    // The host's cache is every worker's cache.
  }
  void setWeights(const std::map<std::string, std::uint32_t>& weights) override;
  LoadReport load() const override;
  std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) override;
  void onCompletion(Completion completion) override;
  void tick() override;
  void clear() override;

 private:
  struct Worker {
    std::unique_ptr<SessionHost> host;
    std::uint32_t sessionsAtRelease = 0;
  };
  // Releases whose sessions are all gone.
  void finishReleases();

  FrontendParts parts_;
  UnderlyingDirectory& directory_;
  PoolExecutor executor_;
  std::map<std::uint64_t, Worker> workers_;
};

// `kiln nest`: the weighted fair queue and a nesting host over InProcessWorkers.
ServingMode nestingHostMode();

}  // namespace kiln::nesting
