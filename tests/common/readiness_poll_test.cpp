#include "common/transport/readiness_poll.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace kiln {
namespace {

using namespace std::chrono_literals;

// A DEALER/ROUTER pair on inproc, each in its own context's view like a
// client and a worker.
struct Pair {
  zmq::context_t zmq{1};
  zmq::socket_t router{zmq, zmq::socket_type::router};
  zmq::socket_t dealer{zmq, zmq::socket_type::dealer};
  explicit Pair(const std::string& name) {
    router.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::linger, 0);
    router.bind("inproc://" + name);
    dealer.connect("inproc://" + name);
  }
};

// Sends `text` from `dealer` after `delay`, while the test waits.
std::thread sendAfter(zmq::socket_t& dealer, std::chrono::milliseconds delay, std::string text) {
  return std::thread([&dealer, delay, text = std::move(text)] {
    std::this_thread::sleep_for(delay);
    dealer.send(zmq::buffer(text), zmq::send_flags::none);
  });
}

// Waits (a few bounded rounds: a wait may wake for nothing) until ready.
int waitForSomething(ReadinessPoll& poll) {
  int ready = 0;
  for (int i = 0; i < 5 && ready == 0; ++i) ready = poll.wait(2s);
  return ready;
}

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

TEST(ReadinessPollTest, NothingReadyTimesOut) {
  Pair pair("poll-idle");
  Pipe pipe;
  ReadinessPoll poll;
  std::size_t socket = poll.addSocket(pair.router);
  std::size_t fd = poll.addFd(pipe.fds[0]);
  EXPECT_EQ(poll.wait(20ms), 0);
  EXPECT_FALSE(poll.ready(socket));
  EXPECT_FALSE(poll.ready(fd));
}

TEST(ReadinessPollTest, AQueuedMessageIsSeenWithoutBlocking) {
  Pair pair("poll-queued");
  pair.dealer.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  ReadinessPoll poll;
  std::size_t socket = poll.addSocket(pair.router);
  auto started = std::chrono::steady_clock::now();
  // The message may still be on its way through the pipe: allow a few waits.
  for (int i = 0; i < 5 && poll.wait(2s) == 0; ++i) {
  }
  EXPECT_TRUE(poll.ready(socket));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(ReadinessPollTest, AMessageArrivingDuringTheWaitWakesIt) {
  Pair pair("poll-wake");
  ReadinessPoll poll;
  std::size_t socket = poll.addSocket(pair.router);
  std::thread sender = sendAfter(pair.dealer, 50ms, "late");
  int ready = waitForSomething(poll);
  sender.join();
  EXPECT_EQ(ready, 1);
  EXPECT_TRUE(poll.ready(socket));
  zmq::message_t id, body;
  ASSERT_TRUE(pair.router.recv(id, zmq::recv_flags::dontwait));
  ASSERT_TRUE(pair.router.recv(body, zmq::recv_flags::dontwait));
  EXPECT_EQ(body.to_string(), "late");
}

TEST(ReadinessPollTest, SocketsAndDescriptorsAreReportedTogether) {
  Pair pair("poll-both");
  Pipe pipe;
  pair.dealer.send(zmq::str_buffer("x"), zmq::send_flags::none);
  ASSERT_EQ(::write(pipe.fds[1], "y", 1), 1);
  ReadinessPoll poll;
  std::size_t socket = poll.addSocket(pair.router);
  std::size_t fd = poll.addFd(pipe.fds[0]);
  for (int i = 0; i < 50 && !(poll.ready(socket) && poll.ready(fd)); ++i) poll.wait(100ms);
  // A ready socket must not hide a readable pipe (no starvation).
  EXPECT_TRUE(poll.ready(socket));
  EXPECT_TRUE(poll.ready(fd));
}

TEST(ReadinessPollTest, AHungUpDescriptorIsReady) {
  Pipe pipe;
  ::close(pipe.fds[1]);
  pipe.fds[1] = -1;
  ReadinessPoll poll;
  std::size_t fd = poll.addFd(pipe.fds[0]);
  EXPECT_EQ(poll.wait(1s), 1);
  EXPECT_TRUE(poll.ready(fd));
}

TEST(ReadinessPollTest, ADrainedOnlySocketIsSeenThroughItsDescriptor) {
  Pair pair("poll-drained");
  ReadinessPoll poll;
  std::size_t socket = poll.addSocket(pair.router, SocketUse::kDrainedOnly);
  // Drain first, as the owner of such a socket always does.
  zmq::message_t nothing;
  EXPECT_FALSE(pair.router.recv(nothing, zmq::recv_flags::dontwait));
  std::thread sender = sendAfter(pair.dealer, 30ms, "event");
  int ready = waitForSomething(poll);
  sender.join();
  EXPECT_EQ(ready, 1);
  EXPECT_TRUE(poll.ready(socket));
}

TEST(ReadinessPollTest, ClearForgetsEverything) {
  Pair pair("poll-clear");
  ReadinessPoll poll;
  poll.addSocket(pair.router);
  poll.clear();
  EXPECT_EQ(poll.size(), 0u);
  EXPECT_EQ(poll.wait(0ms), 0);
}

}  // namespace
}  // namespace kiln
