// Same-host clients reach workers over ipc:// (checked through the address
// the client's socket actually connected to): stepping, forcing TCP, a
// worker without a local endpoint, and a worker SIGKILLed under a session
// that is then restored by replay on the survivor, again over ipc://.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "bench/child_cluster.h"
#include "common/local_transport.h"
#include "local/local_cluster.h"
#include "tests/integration/two_workers.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

LocalClusterOptions fastOptions() {
  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.coordinator.heartbeatInterval = 100ms;
  options.worker.link.heartbeatInterval = 100ms;
  return options;
}

std::unique_ptr<client::Client> connect(const std::string& coordinator, bool forceTcp = false) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 5s;
  options.forceTcp = forceTcp;
  return std::move(client::Client::connect(options).value());
}

// The connection event reaches the client's monitor asynchronously.
std::string connectedAddress(client::Client& client, const std::string& endpoint) {
  auto deadline = std::chrono::steady_clock::now() + 3s;
  std::string address = client.connectedAddress(endpoint);
  while (address.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
    address = client.connectedAddress(endpoint);
  }
  return address;
}

std::int64_t stepSum(client::Session& session, std::int64_t action) {
  auto result = session.step({Value(action)}, std::vector<std::string>{"Sum"});
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? result->observations[0].as<std::int64_t>() : -1;
}

TEST(LocalTransportTest, SameHostClientStepsOverIpc) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto workers = client->listCluster().value();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].localEndpoint.rfind("ipc://@kiln-worker-", 0), 0u)
      << workers[0].localEndpoint;
  EXPECT_EQ(workers[0].hostIdentity, currentHostIdentity());

  auto session = client->startSession({"noop", "benchmark://t/ipc"}).value();
  EXPECT_EQ(session->endpoint(), workers[0].endpoint);  // the TCP name stays the identity
  EXPECT_EQ(stepSum(*session, 3), 3);
  EXPECT_EQ(stepSum(*session, 4), 7);
  EXPECT_EQ(connectedAddress(*client, session->endpoint()), workers[0].localEndpoint);
  EXPECT_TRUE(session->end().ok());
}

TEST(LocalTransportTest, ForcedTcpClientUsesTheTcpEndpoint) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint(), /*forceTcp=*/true);
  auto session = client->startSession({"noop", "benchmark://t/tcp"}).value();
  EXPECT_EQ(stepSum(*session, 5), 5);
  std::string address = connectedAddress(*client, session->endpoint());
  EXPECT_EQ(address, session->endpoint());
  EXPECT_EQ(address.rfind("tcp://", 0), 0u) << address;
}

TEST(LocalTransportTest, WorkerWithoutLocalEndpointIsReachedOverTcp) {
  LocalClusterOptions options = fastOptions();
  options.worker.localListen = "";
  auto cluster = LocalCluster::start(options).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  EXPECT_EQ(client->listCluster().value().at(0).localEndpoint, "");
  auto session = client->startSession({"noop", "benchmark://t/none"}).value();
  EXPECT_EQ(stepSum(*session, 2), 2);
  EXPECT_EQ(connectedAddress(*client, session->endpoint()), session->endpoint());
}

TEST(LocalTransportTest, ALocalListenThatIsNotIpcIsRefused) {
  LocalClusterOptions options = fastOptions();
  options.worker.localListen = "tcp://127.0.0.1:0";
  auto cluster = LocalCluster::start(options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(cluster.status().message().find("not an ipc:// endpoint"), std::string::npos)
      << cluster.status().toString();
}

TEST(LocalTransportTest, WorkerKilledUnderAnIpcSessionIsRestoredOverIpc) {
  zmq::context_t zmq(1);
  SteadyClock clock;
  CoordinatorConfig config;
  config.listen = "tcp://127.0.0.1:0";
  auto coordinator =
      CoordinatorServer::create(config, zmq, clock, makeNullLogger("coordinator")).value();
  std::thread coordinatorThread([&] { coordinator->run(); });
  struct StopCoordinator {
    CoordinatorServer& server;
    std::thread& thread;
    ~StopCoordinator() {
      server.stop();
      thread.join();
    }
  } stopCoordinator{*coordinator, coordinatorThread};

  auto client = connect(coordinator->endpoint());
  integration::TwoWorkers two;
  ASSERT_NO_FATAL_FAILURE(
      integration::startTwoWorkers(KILN_BINARY, coordinator->endpoint(), *client, two));
  std::int64_t expected = 0;
  for (int i = 0; i < 20; ++i) {
    expected += i % 5;
    ASSERT_EQ(stepSum(*two.onDoomed, i % 5), expected);
  }
  std::string before = connectedAddress(*client, two.doomed->endpoint);
  ASSERT_EQ(before.rfind("ipc://", 0), 0u) << before;

  ::kill(two.doomed->process.pid(), SIGKILL);
  // The ipc connection drops like a TCP one: the next step rebuilds the
  // session on the survivor by replay.
  EXPECT_EQ(stepSum(*two.onDoomed, 1), expected + 1);
  EXPECT_EQ(two.onDoomed->endpoint(), two.survivor->endpoint);
  EXPECT_EQ(two.onDoomed->restores(), 1u);
  std::string after = connectedAddress(*client, two.survivor->endpoint);
  EXPECT_EQ(after.rfind("ipc://", 0), 0u) << after;
  EXPECT_NE(after, before);
  EXPECT_EQ(stepSum(*two.onSurvivor, 2), 2);
}

}  // namespace
}  // namespace kiln
