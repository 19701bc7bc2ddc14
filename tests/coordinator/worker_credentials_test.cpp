// Who may register as a worker, and what a client's placement tells a
// worker (common/security/identity.h), without sockets: a coordinator with the
// operator's token registers only its holders; a placement carries the
// client's pass for the placed worker, a MAC under that worker's own key,
// never the client's secret.
#include <gtest/gtest.h>

#include "common/base/wire_convert.h"
#include "coordinator/coordinator_core.h"
#include "tests/support/test_identity.h"

namespace kiln {
namespace {

using testsupport::asData;
using testsupport::testClientId;
using testsupport::testSecret;

class WorkerCredentialsTest : public ::testing::Test {
 protected:
  explicit WorkerCredentialsTest(Secret token = {})
      : core_(
            [&] {
              CoordinatorConfig config;
              config.workerToken = token;
              return config;
            }(),
            clock_, makeNullLogger("c")) {}

  // The answer to one envelope from `peer`.
  Result<InboundMessage> ask(const std::string& peer,
                             const std::function<void(wire::Envelope::Builder)>& fill) {
    capnp::MallocMessageBuilder builder;
    fill(initEnvelope(builder, 5));
    zmq::message_t frame = encodeFrame(builder);
    std::vector<Outgoing> out;
    core_.handle(peer, InboundMessage::decode(frame, FrameLimits{}).value(), out);
    if (out.empty()) return internalError("no answer");
    auto answer = InboundMessage::decode(out.front().frame, FrameLimits{});
    if (answer.ok() && answer->envelope().getReply().isError()) {
      return fromWire(answer->envelope().getReply().getError());
    }
    return answer;
  }

  Status registerWorker(const std::string& peer, const PassKey& key, const Secret* token,
                        bool nesting = false) {
    return ask(peer,
               [&](wire::Envelope::Builder e) {
                 auto r = e.initRequest().initRegisterWorker();
                 r.setEndpoint("tcp://" + peer + ":9");
                 r.setSlots(1);
                 r.setNesting(nesting);
                 r.initSessionTypes(1).set(0, "noop");
                 if (!key.empty()) r.setPassKey(key.wire());
                 if (token != nullptr) r.setToken(wireBytes(*token));
               })
        .status();
  }

  // A placement asked with client `n`'s secret (none with n < 0), naming
  // `worker` if set.
  Result<InboundMessage> place(int n, const std::string& worker = {}) {
    return ask("client", [&](wire::Envelope::Builder e) {
      if (n >= 0) e.setClientSecret(asData(testSecret(n)));
      auto place = e.initRequest().initPlace();
      place.setSessionType("noop");
      if (!worker.empty()) place.setWorker(worker);
    });
  }

  FakeClock clock_;
  CoordinatorCore core_;
};

class TokenCoordinatorTest : public WorkerCredentialsTest {
 protected:
  TokenCoordinatorTest() : WorkerCredentialsTest(operatorToken()) {}
  static const Secret& operatorToken() {
    static const Secret token = Secret::draw();
    return token;
  }
};

// Issue 48: a client registered a fake worker with plain requests and was
// placed other clients' sessions.
TEST_F(TokenCoordinatorTest, OnlyAHolderOfTheOperatorsTokenRegisters) {
  const Secret wrong = Secret::draw();
  for (const Secret* token : {static_cast<const Secret*>(nullptr), &wrong}) {
    Status refused = registerWorker("fake", PassKey::draw(), token);
    EXPECT_EQ(refused.code(), ErrorCode::kPermissionDenied) << refused.toString();
    EXPECT_NE(refused.message().find("--worker-token-file"), std::string::npos)
        << refused.toString();
    Status host = registerWorker("fakehost", PassKey::draw(), token, /*nesting=*/true);
    EXPECT_EQ(host.code(), ErrorCode::kPermissionDenied) << host.toString();
  }
  EXPECT_TRUE(core_.workers().empty());
  EXPECT_FALSE(place(1).ok()) << "nothing to place on";
  EXPECT_EQ(core_.placements(), 0u);
  EXPECT_TRUE(registerWorker("real", PassKey::draw(), &operatorToken()).ok());
  EXPECT_EQ(core_.workers().size(), 1u);
}

TEST_F(WorkerCredentialsTest, AWorkerRegistersItsPassKey) {
  Status refused = registerWorker("w", PassKey{}, nullptr);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument) << refused.toString();
  EXPECT_NE(refused.message().find("pass key"), std::string::npos) << refused.toString();
  EXPECT_TRUE(core_.workers().empty());
}

TEST_F(WorkerCredentialsTest, APlacementCarriesThePassOfThePlacedWorkerAndNoSecret) {
  const PassKey a = PassKey::draw(), b = PassKey::draw();
  ASSERT_TRUE(registerWorker("a", a, nullptr).ok());
  ASSERT_TRUE(registerWorker("b", b, nullptr).ok());
  const ClientId client = testClientId(1);
  for (int i = 0; i < 4; ++i) {
    auto placed = place(1);
    ASSERT_TRUE(placed.ok()) << placed.status().toString();
    auto placement = placed->envelope().getReply().getPlacement();
    const PassKey& key = placement.getEndpoint() == "tcp://a:9" ? a : b;
    const PassKey& other = &key == &a ? b : a;
    const ClientPass expected = clientPass(key, client), elsewhere = clientPass(other, client);
    ASSERT_EQ(placement.getClientPass().size(), kClientPassBytes);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), placement.getClientPass().begin()));
    EXPECT_FALSE(std::equal(elsewhere.begin(), elsewhere.end(), placement.getClientPass().begin()));
    EXPECT_FALSE(placed->envelope().hasClientSecret());
  }
  auto anonymous = place(-1);
  ASSERT_TRUE(anonymous.ok()) << anonymous.status().toString();
  EXPECT_EQ(anonymous->envelope().getReply().getPlacement().getClientPass().size(), 0u);
}

TEST_F(WorkerCredentialsTest, ANamedWorkerGivesItsPassAndNothingElseDoes) {
  const PassKey a = PassKey::draw();
  ASSERT_TRUE(registerWorker("a", a, nullptr).ok());
  ASSERT_TRUE(registerWorker("host", PassKey::draw(), nullptr, /*nesting=*/true).ok());
  auto named = place(2, "tcp://a:9");
  ASSERT_TRUE(named.ok()) << named.status().toString();
  const ClientPass expected = clientPass(a, testClientId(2));
  auto pass = named->envelope().getReply().getPlacement().getClientPass();
  ASSERT_EQ(pass.size(), kClientPassBytes);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), pass.begin()));
  EXPECT_EQ(place(2, "tcp://nobody:9").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(place(2, "tcp://host:9").status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
