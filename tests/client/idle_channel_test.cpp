// A channel nobody waits on must not stop the others. ZeroMQ's I/O thread
// sends a socket's monitor events with a blocking send: when a channel's
// events were not read (one to a worker that died and is never used again),
// a thousand of them once stopped that thread, and every channel of the
// client with it (found by `kiln bench chaos --episodes --fault crash`: a
// client that ran for minutes stopped getting any reply). Here a peer that
// accepts connections and closes them at once makes the idle channel's
// events come fast (a connect, a failed handshake and a drop every retry).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <zmq.hpp>

#include "client/zmq_channel.h"

namespace kiln::client {
namespace {

using namespace std::chrono_literals;

// Accepts every connection on a loopback port and closes it at once.
class RudePeer {
 public:
  RudePeer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(fd_, 64), 0);
    socklen_t length = sizeof(address);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stopping_.load()) {
        const int accepted = ::accept(fd_, nullptr, nullptr);
        if (accepted >= 0) ::close(accepted);
        ++accepted_;
      }
    });
  }
  ~RudePeer() {
    stopping_.store(true);
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  std::uint64_t accepted() const { return accepted_.load(); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> accepted_{0};
  std::thread thread_;
};

TEST(IdleChannel, UnreadConnectionEventsDoNotStopTheOtherChannels) {
  zmq::context_t zmq(1);
  zmq::socket_t server(zmq, zmq::socket_type::router);
  server.set(zmq::sockopt::linger, 0);
  server.bind("tcp://127.0.0.1:0");
  const std::string serverEndpoint = server.get(zmq::sockopt::last_endpoint);
  RudePeer rude;

  RequestIdentity identity;
  ZmqChannel idle(zmq, rude.endpoint(), identity, FrameLimits{}, {}, std::nullopt);
  ZmqChannel busy(zmq, serverEndpoint, identity, FrameLimits{}, {}, std::nullopt);
  // Over two thousand events (three a reconnect; an inproc queue holds both
  // ends' bounds, 2 x 1000 by default) from reconnects to the rude peer,
  // none read: bounded by count and by time.
  // A stopped I/O thread stops retrying too: waiting ends when the count
  // stalls for 3 s.
  const auto giveUp = std::chrono::steady_clock::now() + 240s;
  auto lastProgress = std::chrono::steady_clock::now();
  for (std::uint64_t seen = 0;
       rude.accepted() < 700 && std::chrono::steady_clock::now() < giveUp;) {
    std::this_thread::sleep_for(100ms);
    if (rude.accepted() != seen) {
      seen = rude.accepted();
      lastProgress = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - lastProgress > 3s) {
      break;
    }
  }
  EXPECT_GE(rude.accepted(), 700u) << "the client's I/O thread stopped retrying";

  // The other channel's request still reaches its server.
  capnp::MallocMessageBuilder builder;
  busy.begin(builder, 5s).initRequest().initGetVersion();
  ASSERT_TRUE(busy.send(builder).ok());
  zmq::pollitem_t item{server.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(5000));
  EXPECT_TRUE(item.revents & ZMQ_POLLIN) << "the client's I/O thread stopped";
}

}  // namespace
}  // namespace kiln::client
