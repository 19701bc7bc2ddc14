// A coordinator and one noop worker in this process, over loopback TCP: the
// fixture of the tests that attack a cluster's front door (CURVE keys, the
// worker token, rogue workers). Both servers share one ZeroMQ context, and
// with a cluster key one ZAP authenticator, whose refusals go to `log`.
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/clock.h>
#include <kiln/logging.h>
#include <kiln/secret.h>
#include "common/security/zap_authenticator.h"
#include "coordinator/coordinator_server.h"
#include "worker/worker_server.h"

namespace kiln::testsupport {

// A logger whose lines a test can read back.
struct CapturedLog {
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(512);
  Logger logger = std::make_shared<spdlog::logger>("auth", sink);
  std::string text() const;
  bool contains(const std::string& text) const;
};

struct LoopbackClusterOptions {
  std::optional<ClusterKeys> keys;          // none: a plaintext cluster
  std::vector<std::string> authorizedKeys;  // extra client keys (--authorized-keys)
  Secret workerToken;                       // asked of workers when set; the worker has it
  bool tcpOnly = false;                     // the worker offers no same-host endpoint
};

class LoopbackCluster {
 public:
  explicit LoopbackCluster(LoopbackClusterOptions options = {});
  ~LoopbackCluster();
  LoopbackCluster(const LoopbackCluster&) = delete;
  LoopbackCluster& operator=(const LoopbackCluster&) = delete;

  // Another noop-serving worker of this coordinator (not started: run it).
  std::unique_ptr<WorkerServer> startWorker(zmq::context_t& context, ServerSecurity security,
                                            SessionTypeRegistry& registry) const;
  // A client of the coordinator (with `keys`, over TCP unless `forceTcp` is false).
  std::unique_ptr<client::Client> client(std::optional<ClusterKeys> keys = std::nullopt,
                                         bool forceTcp = true) const;

  zmq::context_t zmq{1};
  CapturedLog log;
  std::unique_ptr<ZapAuthenticator> auth;
  SteadyClock clock;
  SessionTypeRegistry types;
  std::unique_ptr<CoordinatorServer> coordinator;
  std::thread coordinatorThread;
  std::unique_ptr<WorkerServer> worker;
  std::thread workerThread;

 private:
  LoopbackClusterOptions options_;
};

}  // namespace kiln::testsupport
