// The bed's emulated links (scripts/netbed up --emulated: `kiln bench
// netbed-switch`) on real TCP between two namespaces: the round trip grows
// by twice the shape's delay, and a cut cable lets nothing through until it
// is healed. Skipped without root or TAP devices.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include "bench/socket_floor.h"
#include "common/unique_fd.h"
#include "testing/child_cluster.h"
#include "testing/net_bed.h"

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

}  // namespace
}  // namespace kiln
