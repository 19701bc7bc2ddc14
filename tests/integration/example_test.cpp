// The user-defined session type in examples/ registers, serves, forks, and
// is restored by replay with its reward counting from where it was.
#include <gtest/gtest.h>

#include <thread>

#include <kiln/client/client.h>
#include "coordinator/coordinator_server.h"
#include "tests/support/child_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

TEST(ExampleTest, CounterWorkerServesItsSessionType) {
  zmq::context_t zmq(1);
  SteadyClock clock;
  CoordinatorConfig config;
  config.listen = "tcp://127.0.0.1:0";
  auto coordinator = CoordinatorServer::create(config, zmq, clock, makeNullLogger("c")).value();
  std::thread thread([&] { coordinator->run(); });
  {
    auto children = testsupport::ChildCluster::create(KILN_COUNTER_WORKER).value();
    std::vector<testsupport::ChildProcess*> workers;
    for (int i = 0; i < 2; ++i) {
      auto child = children.spawn({"--coordinator", coordinator->endpoint(), "--log-level", "off"});
      ASSERT_TRUE(child.ok()) << child.status().toString();
      workers.push_back(*child);
    }
    client::ClientOptions options;
    options.coordinator = coordinator->endpoint();
    options.requestTimeout = 5s;
    auto client = client::Client::connect(options).value();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (client->listCluster()->size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    client::SessionOptions start{"counter", "benchmark://example/x"};
    start.program = "xy";
    start.observations = {"Text", "Reward:LengthGained"};
    auto session = client->startSession(start);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    EXPECT_EQ((*session)->initialObservations()[0].as<std::string>(), "xy");
    EXPECT_EQ((*session)->initialObservations()[1].as<std::int64_t>(), 0);
    const std::vector<std::string> all{"Text", "Length", "Reward:LengthGained"};
    auto step = (*session)->step({Value(std::int64_t{0}), Value(std::int64_t{1})}, all);
    ASSERT_TRUE(step.ok()) << step.status().toString();
    EXPECT_EQ(step->observations[0].as<std::string>(), "xyab");
    EXPECT_EQ(step->observations[1].as<std::int64_t>(), 4);
    EXPECT_EQ(step->observations[2].as<std::int64_t>(), 2);
    EXPECT_FALSE(step->restored);
    auto fork = (*session)->fork().value();
    EXPECT_TRUE(
        fork->step({Value(std::int64_t{3})}, std::vector<std::string>{"Text"})->endOfEpisode);

    // A step that does not ask for the reward, then the worker dies: the
    // session is rebuilt on the other worker by replay (the type declares a
    // replay policy), and the next reward still counts from the last one
    // (2 letters), not from the start of the replayed episode (4).
    ASSERT_TRUE((*session)->step({Value(std::int64_t{0})}, std::vector<std::string>{}).ok());
    for (auto* worker : workers) {
      if (worker->endpoint == (*session)->endpoint()) worker->process.kill();
    }
    auto restored = (*session)->step({Value(std::int64_t{1})}, all);
    ASSERT_TRUE(restored.ok()) << restored.status().toString();
    EXPECT_TRUE(restored->restored);
    EXPECT_EQ((*session)->restores(), 1u);
    EXPECT_EQ(restored->observations[0].as<std::string>(), "xyabab");
    EXPECT_EQ(restored->observations[2].as<std::int64_t>(), 2);
  }
  coordinator->stop();
  thread.join();
}

}  // namespace
}  // namespace kiln
