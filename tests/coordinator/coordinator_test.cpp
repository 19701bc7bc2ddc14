// Placement as a pure policy, and the coordinator's registry and liveness
// driven by a fake clock, without sockets.
#include <gtest/gtest.h>

#include "common/wire_convert.h"
#include "coordinator/coordinator_core.h"

namespace kiln {
namespace {

WorkerSnapshot worker(std::uint64_t id, std::uint32_t slots, std::uint32_t live,
                      std::vector<std::string> types = {"noop"}, std::uint32_t max = 100) {
  WorkerSnapshot w;
  w.id = WorkerId{id};
  w.slots = slots;
  w.liveSessions = live;
  w.maxSessions = max;
  w.sessionTypes = std::move(types);
  return w;
}

TEST(PlacementTest, LeastLoadedPerSlotWins) {
  std::vector<WorkerSnapshot> cluster{worker(1, 2, 4), worker(2, 8, 8), worker(3, 1, 3)};
  EXPECT_EQ(placeSession(cluster, "noop")->value, 2u);  // 1 session per slot
}

TEST(PlacementTest, PendingPlacementsCountAsLoad) {
  std::vector<WorkerSnapshot> cluster{worker(1, 1, 0), worker(2, 1, 1)};
  cluster[0].placedSessions = 2;
  EXPECT_EQ(placeSession(cluster, "noop")->value, 2u);
}

TEST(PlacementTest, RespectsSessionTypesAndLimits) {
  std::vector<WorkerSnapshot> cluster{worker(1, 4, 0, {"llvm"}), worker(2, 1, 5, {"noop"}, 5)};
  EXPECT_EQ(placeSession(cluster, "llvm")->value, 1u);
  auto full = placeSession(cluster, "noop");
  EXPECT_EQ(full.status().code(), ErrorCode::kOverloaded);
  auto unknown = placeSession(cluster, "gcc");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("llvm, noop"), std::string::npos);
  EXPECT_EQ(placeSession({}, "noop").status().code(), ErrorCode::kOverloaded);
}

class CoordinatorCoreTest : public ::testing::Test {
 protected:
  CoordinatorCoreTest() : core_(CoordinatorConfig{}, clock_, makeNullLogger("c")) {}

  std::vector<Outgoing> send(const std::string& peer,
                             const std::function<void(wire::Envelope::Builder)>& fill,
                             std::uint16_t version = wire::PROTOCOL_VERSION) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, 5);
    envelope.setProtocolVersion(version);
    fill(envelope);
    zmq::message_t frame = encodeFrame(builder);
    std::vector<Outgoing> out;
    core_.handle(peer, InboundMessage::decode(frame, FrameLimits{}).value(), out);
    return out;
  }

  static wire::Envelope::Reader decode(std::vector<Outgoing>& out, std::size_t i,
                                       std::optional<InboundMessage>& keep) {
    keep.emplace(InboundMessage::decode(out.at(i).frame, FrameLimits{}).value());
    return keep->envelope();
  }

  void registerWorker(const std::string& peer) {
    auto out = send(peer, [](wire::Envelope::Builder e) {
      auto r = e.initRequest().initRegisterWorker();
      r.setEndpoint("tcp://127.0.0.1:9");
      r.setSlots(2);
      r.initSessionTypes(1).set(0, "noop");
    });
    std::optional<InboundMessage> keep;
    ASSERT_TRUE(decode(out, 0, keep).getReply().isRegistered());
  }

  void heartbeat(const std::string& peer) {
    send(peer, [](wire::Envelope::Builder e) { e.initHeartbeat().initLoad().setLiveSessions(3); });
  }

  std::size_t tick() {
    std::vector<Outgoing> out;
    core_.tick(out);
    return core_.workers().size();
  }

  FakeClock clock_;
  CoordinatorCore core_;
};

TEST_F(CoordinatorCoreTest, SilentWorkerIsLostAfterThreeIntervals) {
  registerWorker("w1");
  clock_.advance(std::chrono::milliseconds(2900));
  EXPECT_EQ(tick(), 1u);
  clock_.advance(std::chrono::milliseconds(200));
  EXPECT_EQ(tick(), 0u);
  EXPECT_EQ(core_.workersLost(), 1u);
}

TEST_F(CoordinatorCoreTest, LateHeartbeatCancelsThePendingLoss) {
  registerWorker("w1");
  clock_.advance(std::chrono::milliseconds(2500));  // two intervals missed
  heartbeat("w1");
  clock_.advance(std::chrono::milliseconds(2500));
  EXPECT_EQ(tick(), 1u);
  EXPECT_EQ(core_.workers().begin()->second.snapshot.liveSessions, 3u);
}

TEST_F(CoordinatorCoreTest, UnknownWorkerHeartbeatGetsDisconnect) {
  auto out = send("stranger", [](wire::Envelope::Builder e) { e.initHeartbeat(); });
  std::optional<InboundMessage> keep;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(decode(out, 0, keep).isDisconnect());
}

TEST_F(CoordinatorCoreTest, OtherProtocolVersionIsRefusedClearly) {
  auto out = send(
      "old", [](wire::Envelope::Builder e) { e.initRequest().initListCluster(); }, 999);
  std::optional<InboundMessage> keep;
  Status refusal = fromWire(decode(out, 0, keep).getReply().getError());
  EXPECT_NE(refusal.message().find("protocol version 999"), std::string::npos);
}

TEST_F(CoordinatorCoreTest, PlacementGoesToARegisteredWorker) {
  registerWorker("w1");
  auto out = send("client", [](wire::Envelope::Builder e) {
    e.initRequest().initPlace().setSessionType("noop");
  });
  std::optional<InboundMessage> keep;
  auto placement = decode(out, 0, keep).getReply().getPlacement();
  EXPECT_EQ(std::string(placement.getEndpoint().cStr()), "tcp://127.0.0.1:9");
  auto wrong = send("client", [](wire::Envelope::Builder e) { e.initRequest().initStep(); });
  std::optional<InboundMessage> keep2;
  EXPECT_TRUE(decode(wrong, 0, keep2).getReply().isError());
}

TEST_F(CoordinatorCoreTest, BadRegistrationIsRefused) {
  auto out = send("w", [](wire::Envelope::Builder e) {
    e.initRequest().initRegisterWorker().setEndpoint("tcp://x:1");
  });
  std::optional<InboundMessage> keep;
  EXPECT_TRUE(decode(out, 0, keep).getReply().isError());
  EXPECT_TRUE(core_.workers().empty());
}

}  // namespace
}  // namespace kiln
