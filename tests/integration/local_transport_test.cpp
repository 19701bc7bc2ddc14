// Same-host clients reach workers over ipc:// (checked through the address
// the client's socket actually connected to) and send their requests over a
// direct channel: stepping, turning direct channels off, forcing TCP, a
// worker without a local endpoint, hostile connections to a worker's direct
// socket, and a worker SIGKILLed under a session that is then restored by
// replay on the survivor, again over ipc:// and a direct channel.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <deque>
#include <fstream>

#include <thread>

#include "common/transport/abstract_socket.h"
#include "common/transport/local_transport.h"
#include "tests/integration/two_workers.h"
#include "tests/support/child_cluster.h"
#include "tools/local_cluster/local_cluster.h"

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

std::unique_ptr<client::Client> connect(const std::string& coordinator, bool forceTcp = false,
                                        bool direct = true) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 5s;
  options.forceTcp = forceTcp;
  options.directSameHost = direct;
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
  EXPECT_TRUE(client->usesDirectChannel(session->endpoint()));
  // The worker's share of a step reaches the client: 20 ms of work in the
  // action, inside the step's round trip.
  ASSERT_TRUE(session->setParameter("noop.busy_us", "20000").ok());
  auto sent = std::chrono::steady_clock::now();
  auto stepped = session->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  auto roundTrip = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_GE(stepped->actionTime, 20ms);
  EXPECT_LE(stepped->actionTime, roundTrip);
  EXPECT_GE(stepped->workerTime, stepped->actionTime);
  EXPECT_LE(stepped->workerTime, roundTrip);
  EXPECT_TRUE(session->end().ok());
}

// A client stepping as fast as it can keeps the worker's loop looking at its
// direct channel; every other client, over another direct channel or over
// ZeroMQ, is still served, and every sum stays exact.
TEST(LocalTransportTest, AHotDirectClientDoesNotStarveOthers) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto hotClient = connect(cluster->coordinatorEndpoint());
  auto hot = hotClient->startSession({"noop", "benchmark://t/hot"}).value();
  // Read now: once the hot loop runs, `hot` is its thread's (a Session
  // belongs to one thread).
  const std::string hotEndpoint = hot->endpoint();
  ASSERT_TRUE(hotClient->usesDirectChannel(hotEndpoint));
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> hotSteps{0};
  std::jthread hotLoop([&] {
    const auto until = std::chrono::steady_clock::now() + 20s;  // bounded even if the test fails
    // 16 steps in flight: whenever the worker replies, more of the hot
    // client's requests already wait on its channel.
    const std::vector<Value> add{Value(std::int64_t{1})};
    const std::vector<std::uint32_t> none;
    std::deque<std::uint64_t> inFlight;
    while (!stop && std::chrono::steady_clock::now() < until) {
      while (inFlight.size() < 16) {
        auto sent = hot->sendStep(add, none);
        if (!sent.ok()) return;
        inFlight.push_back(*sent);
      }
      if (!hot->awaitStep(inFlight.front()).ok()) return;
      inFlight.pop_front();
      ++hotSteps;
    }
    for (std::uint64_t request : inFlight) {
      if (hot->awaitStep(request).ok()) ++hotSteps;
    }
  });
  // jthread: joined on every exit, after `stop` (declared first) is set.
  struct StopOnExit {
    std::atomic<bool>& stop;
    ~StopOnExit() { stop = true; }
  } stopOnExit{stop};
  for (int i = 0; i < 5000 && hotSteps < 1000; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_GE(hotSteps.load(), 1000);
  auto direct = connect(cluster->coordinatorEndpoint());
  auto overZeroMq = connect(cluster->coordinatorEndpoint(), /*forceTcp=*/false, /*direct=*/false);
  for (client::Client* other : {direct.get(), overZeroMq.get()}) {
    auto started = other->startSession({"noop", "benchmark://t/other"});
    ASSERT_TRUE(started.ok()) << started.status().toString();
    auto& session = *started;
    std::int64_t expected = 0;
    for (std::int64_t i = 1; i <= 50; ++i) {
      const std::int64_t add = 1 + i % 7;  // the adding actions (noop_session.h)
      expected += add;
      ASSERT_EQ(stepSum(*session, add), expected);
    }
    EXPECT_TRUE(session->end().ok());
  }
  EXPECT_TRUE(direct->usesDirectChannel(hotEndpoint));
  const std::int64_t before = hotSteps;
  std::this_thread::sleep_for(20ms);
  EXPECT_GT(hotSteps.load(), before);  // the hot client was stepping all along
  stop = true;
  hotLoop.join();
  EXPECT_EQ(stepSum(*hot, 0), hotSteps.load());
  EXPECT_TRUE(hot->end().ok());
}

TEST(LocalTransportTest, DirectChannelsCanBeTurnedOff) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint(), /*forceTcp=*/false, /*direct=*/false);
  auto session = client->startSession({"noop", "benchmark://t/ipc-only"}).value();
  EXPECT_EQ(stepSum(*session, 6), 6);
  EXPECT_FALSE(client->usesDirectChannel(session->endpoint()));
  EXPECT_EQ(connectedAddress(*client, session->endpoint()).rfind("ipc://", 0), 0u);
}

// The abstract socket names this process's workers listen on for direct
// channels, as any local user can list them.
std::vector<std::string> directSocketsOfThisProcess() {
  std::ifstream table("/proc/net/unix");
  std::vector<std::string> names;
  const std::string prefix = fmt::format("@kiln-direct-{}-", ::getpid());
  for (std::string line; std::getline(table, line);) {
    auto at = line.find(prefix);
    if (at != std::string::npos) names.push_back(line.substr(at + 1));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Connects to an abstract socket; -1 on failure.
int connectAbstract(const std::string& name) {
  auto address = abstractAddress(name);
  if (!address.ok()) return -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, address->get(), address->size) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True once the worker closed `fd` (a read returns 0 or fails), within 3 s.
bool closedByPeer(int fd) {
  pollfd readable{fd, POLLIN, 0};
  if (::poll(&readable, 1, 3000) <= 0) return false;
  char byte;
  return ::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0;
}

TEST(LocalTransportTest, HostileDirectConnectionsAreClosedWithoutDisturbingSessions) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto session = client->startSession({"noop", "benchmark://t/hostile"}).value();
  EXPECT_EQ(stepSum(*session, 1), 1);
  ASSERT_TRUE(client->usesDirectChannel(session->endpoint()));
  const auto sockets = directSocketsOfThisProcess();
  ASSERT_EQ(sockets.size(), 1u);

  // A token it was never granted (16 bytes, like a real one).
  int guesser = connectAbstract(sockets[0]);
  ASSERT_GE(guesser, 0);
  const char guessedToken[] =
      "\x10\0\0\0"
      "0123456789abcdef";
  ASSERT_EQ(::send(guesser, guessedToken, 20, MSG_NOSIGNAL), 20);
  EXPECT_TRUE(closedByPeer(guesser));
  ::close(guesser);

  // A frame header that claims 4 GiB: refused before anything is buffered.
  int flooder = connectAbstract(sockets[0]);
  ASSERT_GE(flooder, 0);
  const unsigned char huge[] = {0xff, 0xff, 0xff, 0xff};
  ASSERT_EQ(::send(flooder, huge, sizeof(huge), MSG_NOSIGNAL), 4);
  EXPECT_TRUE(closedByPeer(flooder));
  ::close(flooder);

  // Connected and silent: the session keeps stepping meanwhile.
  int silent = connectAbstract(sockets[0]);
  ASSERT_GE(silent, 0);
  EXPECT_EQ(stepSum(*session, 2), 3);
  EXPECT_EQ(stepSum(*session, 3), 6);
  ::close(silent);
  EXPECT_TRUE(client->usesDirectChannel(session->endpoint()));
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

// Without a same-host route the client treats the worker as on another
// host: ZeroMQ over TCP, and a direct TCP channel to the worker's own loop.
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
  EXPECT_TRUE(client->usesDirectChannel(session->endpoint()));
  EXPECT_EQ(stepSum(*session, 5), 7);
  // Pipelined steps keep their order over the stream.
  std::vector<std::uint64_t> sent;
  for (std::int64_t action = 1; action <= 4; ++action) {
    sent.push_back(session->sendStep({Value(action)}, {0}).value());
  }
  std::int64_t expected = 7;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    expected += static_cast<std::int64_t>(i) + 1;
    auto stepped = session->awaitStep(sent[i]);
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    EXPECT_EQ(stepped->observations.at(0).as<std::int64_t>(), expected);
  }
  EXPECT_TRUE(session->end().ok());
}

// The direct TCP channel is off when the client says so, when the worker's
// operator says so, and never offered by a nesting host: ZeroMQ serves.
TEST(LocalTransportTest, DirectChannelsAcrossHostsCanBeTurnedOffOnEitherSide) {
  LocalClusterOptions options = fastOptions();
  options.worker.localListen = "";
  auto cluster = LocalCluster::start(options).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  client::ClientOptions clientOptions;
  clientOptions.coordinator = cluster->coordinatorEndpoint();
  clientOptions.requestTimeout = 5s;
  clientOptions.directAcrossHosts = false;
  auto client = client::Client::connect(clientOptions).value();
  auto session = client->startSession({"noop", "benchmark://t/off"}).value();
  EXPECT_EQ(stepSum(*session, 2), 2);
  EXPECT_FALSE(client->usesDirectChannel(session->endpoint()));

  options.worker.directTcp.enabled = false;
  auto noTcp = LocalCluster::start(options).value();
  ASSERT_TRUE(noTcp->waitUntilReady(5s).ok());
  auto asking = connect(noTcp->coordinatorEndpoint());
  auto refused = asking->startSession({"noop", "benchmark://t/refused"}).value();
  EXPECT_EQ(stepSum(*refused, 3), 3);
  EXPECT_FALSE(asking->usesDirectChannel(refused->endpoint()));
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
  integration::ThreadedCoordinator coordinator;

  auto client = connect(coordinator.endpoint());
  integration::TwoWorkers two;
  ASSERT_NO_FATAL_FAILURE(
      integration::startTwoWorkers(KILN_BINARY, coordinator.endpoint(), *client, two));
  std::int64_t expected = 0;
  for (int i = 0; i < 20; ++i) {
    expected += i % 5;
    ASSERT_EQ(stepSum(*two.onDoomed, i % 5), expected);
  }
  std::string before = connectedAddress(*client, two.doomed->endpoint);
  ASSERT_EQ(before.rfind("ipc://", 0), 0u) << before;
  // The steps went over a direct channel: its drop is what the client sees.
  ASSERT_TRUE(client->usesDirectChannel(two.doomed->endpoint));

  ::kill(two.doomed->process.pid(), SIGKILL);
  // The ipc connection drops like a TCP one: the next step rebuilds the
  // session on the survivor by replay.
  EXPECT_EQ(stepSum(*two.onDoomed, 1), expected + 1);
  EXPECT_EQ(two.onDoomed->endpoint(), two.survivor->endpoint);
  EXPECT_EQ(two.onDoomed->restores(), 1u);
  std::string after = connectedAddress(*client, two.survivor->endpoint);
  EXPECT_EQ(after.rfind("ipc://", 0), 0u) << after;
  EXPECT_NE(after, before);
  EXPECT_TRUE(client->usesDirectChannel(two.survivor->endpoint));
  EXPECT_EQ(stepSum(*two.onSurvivor, 2), 2);
}

TEST(LocalTransportTest, AWorkerThatDiedBeforeTheFirstConnectionIsLostAtOnce) {
  integration::ThreadedCoordinator coordinator;
  auto client = connect(coordinator.endpoint());
  integration::TwoWorkers two;
  ASSERT_NO_FATAL_FAILURE(
      integration::startTwoWorkers(KILN_BINARY, coordinator.endpoint(), *client, two));
  // A second client learns the same-host routes, but has never connected to
  // the doomed worker when it dies: its abstract socket refuses, and the
  // first request there is a loss at once, not a wait for its deadline.
  client::ClientOptions options;
  options.coordinator = coordinator.endpoint();
  options.requestTimeout = 30s;
  auto late = client::Client::connect(options).value();
  ASSERT_TRUE(late->listCluster().ok());
  ::kill(two.doomed->process.pid(), SIGKILL);
  const auto began = std::chrono::steady_clock::now();
  auto asked = late->workerParameter(two.doomed->endpoint, "service.benchmark_cache.get_size", "");
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.status().code(), ErrorCode::kDisconnected) << asked.status().toString();
  EXPECT_LT(took, 10s) << "waited for the request's deadline";
  // A session placed there by a stale view is restored elsewhere the same way.
  EXPECT_EQ(stepSum(*two.onDoomed, 3), 3);
  EXPECT_EQ(two.onDoomed->endpoint(), two.survivor->endpoint);
}

}  // namespace
}  // namespace kiln
