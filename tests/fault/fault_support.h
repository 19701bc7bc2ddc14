// Shared by the fault tests: an in-process coordinator on loopback, clients
// with short timeouts, and bounded waits (every wait has a deadline).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <kiln/client/client.h>
#include "coordinator/coordinator_server.h"
#include "tests/support/wait.h"

namespace kiln::fault {

using namespace std::chrono_literals;

class InProcessCoordinator {
 public:
  explicit InProcessCoordinator(Duration heartbeat = 100ms);
  ~InProcessCoordinator();
  const std::string& endpoint() const { return server_->endpoint(); }

 private:
  zmq::context_t zmq_{1};
  SteadyClock clock_;
  std::unique_ptr<CoordinatorServer> server_;
  std::thread thread_;
};

std::unique_ptr<client::Client> connectClient(const std::string& coordinator,
                                              const std::string& experiment = {},
                                              Duration requestTimeout = 5s);

// An `llvm` session of `benchmark`, and the action that applies `pass` in it.
client::SessionOptions llvmSession(const std::string& benchmark);
Value passAction(const client::Session& session, const std::string& pass);
// The IrInstructionCount of a new `llvm` session of `benchmark` after
// `passes` (-1 if that fails): what a restored session must match.
std::int64_t instructionCountAfter(client::Client& client, const std::string& benchmark,
                                   const std::vector<std::string>& passes);

using testsupport::waitUntil;

// A free loopback port for a server that must come back on the same one.
int freePort();

// Steps `sessions` round-robin in a thread until stopped, counting failures.
class BackgroundStepper {
 public:
  explicit BackgroundStepper(std::vector<std::unique_ptr<client::Session>> sessions);
  ~BackgroundStepper() { stop(); }
  void stop();
  std::uint64_t steps() const { return steps_.load(); }
  std::uint64_t failures() const { return failures_.load(); }
  const std::string& firstFailure() const { return firstFailure_; }  // after stop()

 private:
  std::vector<std::unique_ptr<client::Session>> sessions_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> steps_{0}, failures_{0};
  std::string firstFailure_;
  std::thread thread_;
};

}  // namespace kiln::fault
