// The coordinator process's server: one poll loop owns the ROUTER socket that
// workers and clients connect to, and feeds CoordinatorCore.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/mailbox.h"
#include "coordinator/coordinator_core.h"

namespace kiln {

class CoordinatorServer {
 public:
  static Result<std::unique_ptr<CoordinatorServer>> create(CoordinatorConfig config,
                                                           zmq::context_t& zmq, const Clock& clock,
                                                           Logger logger);
  const std::string& endpoint() const { return endpoint_; }
  void run();
  void stop();  // thread-safe

 private:
  CoordinatorServer(CoordinatorConfig config, zmq::context_t& zmq, const Clock& clock,
                    Logger logger);
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
};

}  // namespace kiln
