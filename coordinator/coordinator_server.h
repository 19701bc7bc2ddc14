// The coordinator process's server: one poll loop owns the ROUTER socket that
// workers and clients connect to, and feeds CoordinatorCore.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/base/mailbox.h"
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_metrics.h"

namespace kiln {

class CoordinatorServer {
 public:
  static Result<std::unique_ptr<CoordinatorServer>> create(CoordinatorConfig config,
                                                           zmq::context_t& zmq, const Clock& clock,
                                                           Logger logger);
  const std::string& endpoint() const { return endpoint_; }
  // The port of /metrics and the dashboard; 0 when they are off.
  int metricsPort() const { return observe_ ? observe_->port() : 0; }
  void run();
  void stop();  // thread-safe

 private:
  CoordinatorServer(CoordinatorConfig config, zmq::context_t& zmq, const Clock& clock,
                    Logger logger);
  const Clock& clock_;
  void readPeers();
  void flush();

  CoordinatorConfig config_;
  Logger logger_;
  CoordinatorCore core_;
  zmq::socket_t router_;
  std::string endpoint_;
  Mailbox<int> wake_;
  std::atomic<bool> stopping_{false};
  std::vector<Outgoing> out_;
  std::unique_ptr<CoordinatorObservability> observe_;  // null unless metricsListen is set
};

}  // namespace kiln
