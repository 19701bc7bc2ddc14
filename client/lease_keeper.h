// Keeps a client's sessions alive while the user is idle (a training lull):
// a background thread sends KeepAlive to every worker that holds sessions of
// this client, on its own sockets, so the client's own sockets stay
// single-threaded. If the client process dies, the keep-alives stop and the
// workers end its sessions when the lease runs out.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <kiln/clock.h>
#include "client/channel.h"

namespace kiln::client {

class LeaseKeeper {
 public:
  // With an experiment, keep-alives carry its name (nesting hosts refresh the
  // client's leases on that experiment's workers) and `alwaysPing` (the
  // coordinator, which keeps the experiment open) is pinged even when idle.
  // `sender` carries the keep-alives (ChannelFactory::keepAliveSender).
  LeaseKeeper(std::unique_ptr<KeepAliveSender> sender, RequestIdentity identity, Duration period,
              std::string alwaysPing = {});
  ~LeaseKeeper();

  // The experiment's key once the client learns it (it opened the experiment).
  void setExperimentKey(const Secret& key);
  // The client's pass on the worker at `endpoint` (a placement there).
  void setPass(const std::string& endpoint, const WorkerPass& pass);
  // A server the user named that the coordinator does not list (RequestIdentity::named).
  void addNamed(const std::string& endpoint);

  // Counts sessions per worker endpoint; a worker with none gets no keep-alive.
  void addSession(const std::string& endpoint);
  void removeSession(const std::string& endpoint);
  bool hasSessions(const std::string& endpoint);

 private:
  void run();

  std::unique_ptr<KeepAliveSender> sender_;  // used by the thread only
  RequestIdentity identity_;                 // guarded by mutex_
  Duration period_;
  std::string alwaysPing_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, int> sessionsByEndpoint_;
  std::thread thread_;
};

}  // namespace kiln::client
