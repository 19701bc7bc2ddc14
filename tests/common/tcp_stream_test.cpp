// TCP endpoints split for the direct channels across hosts, and the
// listener and bounded connect they use, on loopback.
#include "common/transport/tcp_stream.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "common/transport/listen_exposure.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

TEST(TcpStreamTest, EndpointsSplitIntoHostAndPort) {
  auto plain = splitTcpEndpoint("tcp://10.77.0.2:7800");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->host, "10.77.0.2");
  EXPECT_EQ(plain->port, 7800);
  auto v6 = splitTcpEndpoint("tcp://[::1]:9");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9);
  auto anyPort = splitTcpEndpoint("tcp://*:*");  // ZeroMQ's wildcards
  ASSERT_TRUE(anyPort.has_value());
  EXPECT_EQ(anyPort->host, "*");
  EXPECT_EQ(anyPort->port, 0);
  auto sourced = splitTcpEndpoint("tcp://10.0.0.1:0;node3:7801");  // connect from a source
  ASSERT_TRUE(sourced.has_value());
  EXPECT_EQ(sourced->host, "node3");
  EXPECT_EQ(sourced->port, 7801);
  for (const char* bad : {"ipc://@x", "tcp://host", "tcp://:80", "tcp://h:65536", "tcp://h:8x",
                          "tcp://h:", "udp://h:1", ""}) {
    EXPECT_FALSE(splitTcpEndpoint(bad).has_value()) << bad;
  }
  // What the listen exposure check reads of them.
  EXPECT_TRUE(isLoopbackEndpoint("tcp://127.0.0.1:*"));
  EXPECT_TRUE(isLoopbackEndpoint("tcp://[::1]:5"));
  EXPECT_FALSE(isLoopbackEndpoint("tcp://*:5"));
}

TEST(TcpStreamTest, AListenerTakesAConnectionTunedForSmallRequests) {
  std::uint16_t port = 0;
  auto listener = listenTcp("127.0.0.1", 0, port);
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  ASSERT_NE(port, 0);
  auto connected = connectTcp("127.0.0.1", port, std::chrono::steady_clock::now() + 2s);
  ASSERT_TRUE(connected.ok()) << connected.status().toString();
  int noDelay = 0, keepAlive = 0;
  socklen_t size = sizeof(int);
  ASSERT_EQ(::getsockopt(connected->get(), IPPROTO_TCP, TCP_NODELAY, &noDelay, &size), 0);
  ASSERT_EQ(::getsockopt(connected->get(), SOL_SOCKET, SO_KEEPALIVE, &keepAlive, &size), 0);
  EXPECT_NE(noDelay, 0);
  EXPECT_NE(keepAlive, 0);
  // Names resolve too.
  auto byName = connectTcp("localhost", port, std::chrono::steady_clock::now() + 2s);
  EXPECT_TRUE(byName.ok()) << byName.status().toString();
}

TEST(TcpStreamTest, ARefusedOrUnknownPeerIsAClearError) {
  std::uint16_t port = 0;
  // A port that was just free: nothing listens there now.
  { ASSERT_TRUE(listenTcp("127.0.0.1", 0, port).ok()); }
  auto refused = connectTcp("127.0.0.1", port, std::chrono::steady_clock::now() + 2s);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kDisconnected);
  EXPECT_NE(refused.status().message().find("refused"), std::string::npos)
      << refused.status().toString();
  auto unknown = connectTcp("no-such-host.invalid", 80, std::chrono::steady_clock::now() + 2s);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  // A deadline already past: no wait.
  std::uint16_t live = 0;
  auto listener = listenTcp("127.0.0.1", 0, live);
  ASSERT_TRUE(listener.ok());
  const auto started = std::chrono::steady_clock::now();
  (void)connectTcp("127.0.0.1", live, started - 1s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  // Listening where another listens fails with why.
  std::uint16_t again = 0;
  auto taken = listenTcp("127.0.0.1", live, again);
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
