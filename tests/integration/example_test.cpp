// The user-defined session type in examples/ registers, serves and forks.
#include <gtest/gtest.h>

#include <thread>

#include "client/client.h"
#include "coordinator/coordinator_server.h"
#include "testing/child_cluster.h"

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
    auto child = children.spawn({"--coordinator", coordinator->endpoint(), "--log-level", "off"});
    ASSERT_TRUE(child.ok()) << child.status().toString();
    client::ClientOptions options;
    options.coordinator = coordinator->endpoint();
    options.requestTimeout = 5s;
    auto client = client::Client::connect(options).value();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (client->listCluster()->empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    client::SessionOptions start{"counter", "benchmark://example/x"};
    start.program = "xy";
    start.observations = {"Text"};
    auto session = client->startSession(start);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    EXPECT_EQ((*session)->initialObservations()[0].as<std::string>(), "xy");
    auto step = (*session)->step({Value(std::int64_t{0}), Value(std::int64_t{1})},
                                 std::vector<std::string>{"Text", "Length"});
    ASSERT_TRUE(step.ok()) << step.status().toString();
    EXPECT_EQ(step->observations[0].as<std::string>(), "xyab");
    EXPECT_EQ(step->observations[1].as<std::int64_t>(), 4);
    auto fork = (*session)->fork().value();
    EXPECT_TRUE(
        fork->step({Value(std::int64_t{3})}, std::vector<std::string>{"Text"})->endOfEpisode);

    // The counter type declares no replay policy: when its worker dies, its
    // sessions report a typed "session lost" instead of being rebuilt.
    (*child)->process.kill();
    auto lost = (*session)->step({Value(std::int64_t{0})}, std::vector<std::string>{});
    EXPECT_EQ(lost.status().code(), ErrorCode::kDisconnected) << lost.status().toString();
    EXPECT_NE(lost.status().message().find("cannot be replayed"), std::string::npos)
        << lost.status().toString();
  }
  coordinator->stop();
  thread.join();
}

}  // namespace
}  // namespace kiln
