// Two real worker processes registered with one coordinator, and a noop
// session on each: the set-up of tests that SIGKILL one worker and check that
// its sessions are restored on the other, which keeps serving.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/client/client.h>
#include "coordinator/coordinator_server.h"
#include "tests/support/child_cluster.h"

namespace kiln::integration {

// A coordinator on loopback, served by its own thread until destroyed.
class ThreadedCoordinator {
 public:
  ThreadedCoordinator();
  ~ThreadedCoordinator();
  ThreadedCoordinator(const ThreadedCoordinator&) = delete;
  ThreadedCoordinator& operator=(const ThreadedCoordinator&) = delete;
  std::string endpoint() const { return server_->endpoint(); }

 private:
  zmq::context_t zmq_{1};
  SteadyClock clock_;
  std::unique_ptr<CoordinatorServer> server_;
  std::thread thread_;
};

struct TwoWorkers {
  std::optional<testsupport::ChildCluster> children;
  testsupport::ChildProcess* doomed = nullptr;
  testsupport::ChildProcess* survivor = nullptr;
  std::unique_ptr<client::Session> onDoomed;
  std::unique_ptr<client::Session> onSurvivor;
};

// Starts both workers (the kiln binary `kiln`), waits until `client` sees
// them registered, and starts sessions until each holds one. Fails the
// current test (gtest fatal failure) when any of that does not happen; call
// it inside ASSERT_NO_FATAL_FAILURE.
void startTwoWorkers(const std::string& kiln, const std::string& coordinator,
                     client::Client& client, TwoWorkers& out);

}  // namespace kiln::integration
