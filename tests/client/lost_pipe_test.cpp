// A channel that ZeroMQ stopped connecting without saying so must start
// over, not answer "queue full" for good. Found by `kiln bench chaos
// --episodes 500 --fault freeze --outage-seconds 6` on a loaded machine: a
// worker frozen and woken again was alive and idle, the coordinator placed
// sessions on it, and the bench's channel to it, by every event connected,
// had no connection and no pipe left: each start failed at once with
// "cannot send to ...: its queue is full", for as long as the run lasted.
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <zmq.hpp>

#include "client/zmq_channel.h"

namespace kiln::client {
namespace {

using namespace std::chrono_literals;

// Sends a request that needs no answer here; true once the server got it.
bool reaches(ZmqChannel& channel, zmq::socket_t& server) {
  capnp::MallocMessageBuilder builder;
  channel.begin(builder, 5s).initRequest().initGetVersion();
  auto sent = channel.send(builder);
  EXPECT_TRUE(sent.ok()) << sent.status().toString();
  if (!sent.ok()) return false;
  channel.abandon(*sent);
  zmq::pollitem_t item{server.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, std::chrono::milliseconds(5000));
  if (!(item.revents & ZMQ_POLLIN)) return false;
  zmq::message_t part;
  while (server.recv(part, zmq::recv_flags::dontwait)) {
  }
  return true;
}

// A ROUTER server on a loopback port, and a channel to it.
class LostPipe : public ::testing::Test {
 protected:
  LostPipe() : server_(zmq_, zmq::socket_type::router) {
    server_.set(zmq::sockopt::linger, 0);
    server_.bind("tcp://127.0.0.1:0");
    channel_.emplace(zmq_, server_.get(zmq::sockopt::last_endpoint), identity_, FrameLimits{},
                     std::string{}, std::nullopt);
  }

  zmq::context_t zmq_{1};
  zmq::socket_t server_;
  RequestIdentity identity_;
  std::optional<ZmqChannel> channel_;
};

TEST_F(LostPipe, AChannelZeroMqGaveUpOnSilentlyConnectsAgain) {
  ZmqChannel& channel = *channel_;
  zmq::socket_t& server = server_;
  ASSERT_TRUE(reaches(channel, server));
  const auto giveUp = std::chrono::steady_clock::now() + 5s;
  while (channel.connectedAddress().empty() && std::chrono::steady_clock::now() < giveUp) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_FALSE(channel.connectedAddress().empty());

  channel.dropPipeForTesting();
  EXPECT_FALSE(channel.peerLost()) << "the drop must come without an event, as it did";
  EXPECT_TRUE(reaches(channel, server)) << "the channel did not connect again";
  EXPECT_TRUE(reaches(channel, server));
}

TEST_F(LostPipe, ARequestWaitingWhenThePipeGoesFailsAtOnceAndTheNextOneGetsThrough) {
  // The same freeze runs then lost steps to a timeout (60 s, the client's
  // default): their requests were gone with the pipe, and nothing said so.
  ZmqChannel& channel = *channel_;
  zmq::socket_t& server = server_;
  ASSERT_TRUE(reaches(channel, server));
  capnp::MallocMessageBuilder builder;
  channel.begin(builder, 30s).initRequest().initGetVersion();
  auto sent = channel.send(builder);
  ASSERT_TRUE(sent.ok()) << sent.status().toString();
  channel.dropPipeForTesting();

  const auto started = std::chrono::steady_clock::now();
  auto reply = channel.await(*sent, started + 30s);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kDisconnected) << reply.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_TRUE(reaches(channel, server)) << "the channel did not connect again";
}

}  // namespace
}  // namespace kiln::client
