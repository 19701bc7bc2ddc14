// What runs a nesting host's underlying workers, behind the addressing rules
// the host owns (nesting/nesting_host.h): in-process SessionHosts sharing the
// host's pool (nesting/in_process_backend.h), or a child process per
// experiment (nesting/isolating_backend.h). The host has already decided
// that a request may reach the worker it names; a backend only runs it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <kiln/ids.h>
#include <kiln/underlying.h>
#include "common/transport/frame.h"
#include "worker/frontend.h"

namespace kiln::nesting {

// The host's record of one underlying worker.
struct UnderlyingRecord {
  UnderlyingSpec spec;
  bool releasing = false;  // its sessions are ending; invisible to every client
};

// What a backend may ask of its host.
class UnderlyingDirectory {
 public:
  virtual ~UnderlyingDirectory() = default;
  // Every worker the host knows, by id (released ones are gone).
  virtual const std::map<std::uint64_t, UnderlyingRecord>& workers() const = 0;
  // A release the backend finished: the host answers the release request,
  // forgets the worker (UnderlyingBackend::forget) and shares the slots
  // again. A worker that is not being released is left alone.
  virtual void released(std::uint64_t workerId, std::uint32_t sessionsEnded) = 0;
};

class UnderlyingBackend {
 public:
  virtual ~UnderlyingBackend() = default;

  // Why no worker can be created here (e.g. isolation is unavailable).
  virtual Status usable() const { return okStatus(); }
  // A new worker (its id assigned); an error refuses the createWorker.
  virtual Status create(const UnderlyingSpec& spec) = 0;
  // Ends the worker's sessions; calls UnderlyingDirectory::released once
  // they are gone, now or later.
  virtual void release(const UnderlyingSpec& spec) = 0;
  // The worker was released and is forgotten; `lastOfExperiment`: no other
  // worker of its experiment is left on this host.
  virtual void forget(const UnderlyingSpec& spec, bool lastOfExperiment) = 0;
  // A request for `spec`'s worker that its sender may address.
  virtual void forward(const UnderlyingSpec& spec, const std::string& routingId,
                       InboundMessage message) = 0;
  // A client's keep-alive, for the workers it may use (none empty).
  virtual void keepAlive(ClientId client, const std::vector<std::uint64_t>& workers) = 0;
  // A benchmark a client added at the host, whose workers it may use (none
  // empty). The host's own cache took it already.
  virtual void addBenchmark(const std::vector<std::uint64_t>& workers,
                            const InboundMessage& message) = 0;
  // How the slots are shared: the largest weight of each experiment's workers.
  virtual void setWeights(const std::map<std::string, std::uint32_t>& weights) = 0;
  // Every worker not being released, and the host's totals.
  virtual LoadReport load() const = 0;
  // The host was cut off since `since` (worker/frontend.h): every worker
  // drops the sessions of clients it has not heard from since; how many
  // ended in this process (a child process ends its own and logs them).
  virtual std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) = 0;

  // The frontend's loop, passed on (worker/frontend.h).
  virtual void onCompletion(Completion completion) = 0;
  virtual void tick() = 0;
  virtual void clear() = 0;
  virtual void stopCleanly(Duration within) {}  // WorkerFrontend::stopCleanly
  virtual zmq::socket_t* socket() { return nullptr; }
  virtual void onSocketReadable() {}
};

}  // namespace kiln::nesting
