// The worker's link to the coordinator against a ROUTER played by the test,
// on a fake clock: it registers, and judges the coordinator silent by the
// longer of its own heartbeat interval and the coordinator's.
#include <gtest/gtest.h>

#include "common/transport/frame.h"
#include "worker/coordinator_link.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

class CoordinatorLinkTest : public ::testing::Test {
 protected:
  CoordinatorLinkTest() : router_(zmq_, zmq::socket_type::router) {
    router_.bind("inproc://coordinator");
  }

  // Answers the link's registration with the coordinator's interval.
  void registerWith(CoordinatorLink& link, std::uint32_t coordinatorIntervalMs) {
    link.tick(LoadReport{});  // connects and sends its registration
    zmq::message_t peer, frame;
    ASSERT_TRUE(router_.recv(peer));
    ASSERT_TRUE(router_.recv(frame));
    auto request = InboundMessage::decode(frame, FrameLimits{});
    ASSERT_TRUE(request.ok());
    ASSERT_TRUE(request->envelope().getRequest().isRegisterWorker());
    capnp::MallocMessageBuilder builder(128);
    auto registered =
        initEnvelope(builder, request->envelope().getRequestId()).initReply().initRegistered();
    registered.setWorkerId(7);
    registered.setHeartbeatIntervalMs(coordinatorIntervalMs);
    router_.send(peer, zmq::send_flags::sndmore);
    router_.send(encodeFrame(builder), zmq::send_flags::none);
    zmq::pollitem_t item{link.socket()->handle(), 0, ZMQ_POLLIN, 0};
    ASSERT_EQ(zmq::poll(&item, 1, std::chrono::milliseconds(2000)), 1);
    link.onReadable(FrameLimits{});
    ASSERT_TRUE(link.workerId().has_value());
  }

  CoordinatorLink makeLink(Duration interval) {
    WorkerAdvert advert;
    advert.endpoint = "tcp://127.0.0.1:9";
    advert.sessionTypes = {"noop"};
    LinkTiming timing;
    timing.heartbeatInterval = interval;
    return CoordinatorLink(zmq_, "inproc://coordinator", advert, timing, clock_,
                           makeNullLogger("link"));
  }

  zmq::context_t zmq_;
  zmq::socket_t router_;
  FakeClock clock_;
};

TEST_F(CoordinatorLinkTest, AFasterWorkerWaitsOutTheCoordinatorsLongerInterval) {
  CoordinatorLink link = makeLink(200ms);
  registerWith(link, 1000);
  // The coordinator pings once a second: 0.8 s without a word is not silence
  // for it, though it is four of the worker's own intervals.
  clock_.advance(800ms);
  link.tick(LoadReport{});
  EXPECT_TRUE(link.workerId().has_value());
  clock_.advance(2300ms);  // 3.1 s: three of the coordinator's intervals
  link.tick(LoadReport{});
  EXPECT_FALSE(link.workerId().has_value());
}

TEST_F(CoordinatorLinkTest, ItsOwnIntervalRulesWhenItIsTheLonger) {
  CoordinatorLink link = makeLink(1000ms);
  registerWith(link, 100);
  clock_.advance(2500ms);
  link.tick(LoadReport{});
  EXPECT_TRUE(link.workerId().has_value());
  clock_.advance(600ms);
  link.tick(LoadReport{});
  EXPECT_FALSE(link.workerId().has_value());
}

TEST(CutOffAfterTest, ALittleLessThanBothTheLivenessWindowAndTheZmtpTimeout) {
  // 1 s heartbeats, liveness 3: declared lost after 3 s; clients drop a
  // silent connection after 3 s too. Cut off after 2 s, before either.
  EXPECT_EQ(cutOffAfter(1000ms, 3), 2000ms);
  EXPECT_EQ(cutOffAfter(100ms, 3), 200ms);
  // Long heartbeats: the clients' ZMTP timeout comes first.
  EXPECT_EQ(cutOffAfter(5000ms, 3), 2000ms);
  // Liveness 1 still leaves half an interval.
  EXPECT_EQ(cutOffAfter(1000ms, 1), 500ms);
}

TEST_F(CoordinatorLinkTest, IsCutOffOnlyOnceRegisteredAndSilentForLong) {
  CoordinatorLink link = makeLink(1000ms);
  clock_.advance(10s);
  EXPECT_FALSE(link.cutOffSince().has_value()) << "never registered: no client placed here";
  registerWith(link, 1000);
  const TimePoint heard = clock_.now();
  clock_.advance(1900ms);
  EXPECT_FALSE(link.cutOffSince().has_value());
  clock_.advance(100ms);
  ASSERT_TRUE(link.cutOffSince().has_value());
  // The coordinator pings every second: the cut began within one of the
  // last word, and a client heard after that reaches this worker.
  EXPECT_EQ(*link.cutOffSince(), heard + 1000ms);
  // Still cut off while the link backs off and tries again.
  clock_.advance(5s);
  link.tick(LoadReport{});
  link.tick(LoadReport{});
  EXPECT_EQ(*link.cutOffSince(), heard + 1000ms);
}

}  // namespace
}  // namespace kiln
