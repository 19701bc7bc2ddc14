// The bed's emulated links (scripts/netbed up --emulated: `kiln bench
// netbed-switch`) on real TCP between namespaces: the round trip grows by
// twice the shape's delay, a cut cable lets nothing through until it is
// healed, and sessions stepping over a lossy, jittery link lose no step.
// Skipped without root or TAP devices.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include "bench/cluster_bench.h"
#include "bench/socket_floor.h"
#include "common/base/unique_fd.h"
#include "tests/support/child_cluster.h"
#include "tests/support/net_bed.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

// Whether a TCP connection to address:port is accepted within `timeout`.
bool connectsWithin(const std::string& address, int port, std::chrono::milliseconds timeout) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, address.c_str(), &to.sin_addr);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) return true;
  if (errno != EINPROGRESS) return false;
  pollfd wait{fd.get(), POLLOUT, 0};
  if (::poll(&wait, 1, static_cast<int>(timeout.count())) != 1) return false;
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size);
  return error == 0;
}

TEST(EmulatedLinks, DelayTheRoundTripAndCutAndHealTheCable) {
  auto bed = testsupport::NetBed::create(KILN_NETBED, 2, KILN_BINARY);
  if (!bed.ok() && bed.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << bed.status().message();
  }
  ASSERT_TRUE(bed.ok()) << bed.status().toString();
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto echo = children.spawn(
      {"bench", "socket-echo", "--listen", "tcp:" + (*bed)->address(1) + ":0"}, (*bed)->runOn(1));
  ASSERT_TRUE(echo.ok()) << echo.status().toString();
  const std::string endpoint = (*echo)->endpoint;
  const int port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));

  std::thread([&] {
    ASSERT_TRUE((*bed)->enter(2).ok());
    auto roundTrip = [&] {
      bench::StreamFloorOptions options;
      options.endpoint = endpoint;
      options.samples = 150;  // 100 of them warm up
      options.seconds = 10;
      auto floor = bench::measureStreamFloor(options);
      EXPECT_TRUE(floor.ok()) << floor.status().toString();
      return floor.ok() ? floor->latency.p50us : 0.0;
    };
    const double plain = roundTrip();
    ASSERT_TRUE((*bed)->setShape("2000 0 0").ok());
    const double delayed = roundTrip();
    // Each frame crosses the switch once: 2 ms each way.
    EXPECT_GE(delayed, 4000) << "plain " << plain << " us";
    EXPECT_LT(delayed, plain + 4000 + 20000);
    ASSERT_TRUE((*bed)->setShape("0 0 0").ok());
    EXPECT_LT(roundTrip(), 4000);

    ASSERT_TRUE((*bed)->cut(1).ok());
    EXPECT_FALSE(connectsWithin((*bed)->address(1), port, 1000ms));
    ASSERT_TRUE((*bed)->heal(1).ok());
    EXPECT_TRUE(connectsWithin((*bed)->address(1), port, 3000ms));
  }).join();
}

TEST(EmulatedLinks, StepsOverALossyJitteryLinkAreAllAnswered) {
  auto bed = testsupport::NetBed::create(KILN_NETBED, 3, KILN_BINARY);
  if (!bed.ok() && bed.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << bed.status().message();
  }
  ASSERT_TRUE(bed.ok()) << bed.status().toString();
  // 200 us each way, up to 100 us of jitter, 2% of frames lost.
  ASSERT_TRUE((*bed)->setShape("200 100 0.02").ok());
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto coordinator = children.spawn(
      {"coordinator", "--listen", "tcp://" + (*bed)->address(1) + ":0", "--log-level", "off"},
      (*bed)->runOn(1));
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().toString();
  auto worker = children.spawn({"worker", "--coordinator", (*coordinator)->endpoint, "--listen",
                                "tcp://" + (*bed)->address(2) + ":0", "--log-level", "off"},
                               (*bed)->runOn(2));
  ASSERT_TRUE(worker.ok()) << worker.status().toString();

  std::thread([&] {
    ASSERT_TRUE((*bed)->enter(3).ok());
    client::ClientOptions options;
    options.coordinator = (*coordinator)->endpoint;
    options.requestTimeout = 30s;
    auto client = client::Client::connect(options);
    ASSERT_TRUE(client.ok()) << client.status().toString();
    ASSERT_TRUE(testsupport::waitForWorkers(**client, 1, 20s).ok());
    std::vector<std::unique_ptr<client::Session>> owned;
    std::vector<client::Session*> sessions;
    for (int i = 0; i < 6; ++i) {
      auto session = (*client)->startSession({"noop", "benchmark://netbed/lossy"});
      ASSERT_TRUE(session.ok()) << session.status().toString();
      sessions.push_back(session->get());
      owned.push_back(std::move(*session));
    }
    std::vector<std::int64_t> sums(sessions.size(), 0);
    bench::StepTally tally;
    const auto until = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < until) bench::stepNoopRound(sessions, sums, tally);
    // TCP hides the losses: every step is answered, with the right sum, and
    // nothing is restored (the connection never looked dead).
    EXPECT_EQ(tally.lost, 0u) << tally.firstLoss;
    EXPECT_GT(tally.answered, 100u);
    EXPECT_EQ((*client)->restoredSessions(), 0u);
  }).join();
}

}  // namespace
}  // namespace kiln
