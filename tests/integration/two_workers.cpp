#include "tests/integration/two_workers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kiln::integration {

ThreadedCoordinator::ThreadedCoordinator() {
  CoordinatorConfig config;
  config.listen = "tcp://127.0.0.1:0";
  server_ = CoordinatorServer::create(config, zmq_, clock_, makeNullLogger("coordinator")).value();
  thread_ = std::thread([this] { server_->run(); });
}

ThreadedCoordinator::~ThreadedCoordinator() {
  server_->stop();
  thread_.join();
}

using namespace std::chrono_literals;

void startTwoWorkers(const std::string& kiln, const std::string& coordinator,
                     client::Client& client, TwoWorkers& out) {
  auto children = testsupport::ChildCluster::create(kiln);
  ASSERT_TRUE(children.ok()) << children.status().toString();
  out.children.emplace(std::move(children).value());
  // Fault injection: the tests that kill a worker also skew its replays.
  const std::vector<std::string> worker{"worker",      "--coordinator", coordinator,
                                        "--log-level", "off",           "--enable-fault-injection"};
  auto doomed = out.children->spawn(worker);
  ASSERT_TRUE(doomed.ok()) << doomed.status().toString();
  auto survivor = out.children->spawn(worker);
  ASSERT_TRUE(survivor.ok()) << survivor.status().toString();
  out.doomed = *doomed;
  out.survivor = *survivor;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (client.listCluster()->size() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(client.listCluster()->size(), 2u);
  // Placement spreads sessions; a few starts put one on each worker.
  for (int i = 0; i < 4 && (!out.onDoomed || !out.onSurvivor); ++i) {
    auto session = client.startSession({"noop", "benchmark://t/kill"});
    ASSERT_TRUE(session.ok()) << session.status().toString();
    auto& slot = (*session)->endpoint() == out.doomed->endpoint ? out.onDoomed : out.onSurvivor;
    if (!slot) slot = std::move(session).value();
  }
  ASSERT_TRUE(out.onDoomed && out.onSurvivor);
}

}  // namespace kiln::integration
