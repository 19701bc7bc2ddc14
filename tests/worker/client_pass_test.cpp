// A worker knows a client by its secret, or by its id with the pass the
// coordinator made for this worker (common/security/identity.h): a pass made with
// another worker's key, or for another id, names nobody here, so a worker
// that captured a pass elsewhere cannot start, step or end sessions here.
#include "tests/worker/host_harness.h"
#include "worker/noop_session.h"

namespace kiln {
namespace {

using testsupport::HostHarness;
using testsupport::testClientId;

const PassKey& hostKey() {
  static const PassKey key = PassKey::draw();
  return key;
}

class ClientPassHostTest : public HostHarness {
 protected:
  ClientPassHostTest() : HostHarness(limits()) {
    types_.add<NoopSession>("noop");
    EXPECT_TRUE(types_.start(resources_).ok());
  }
  static HostLimits limits() {
    HostLimits l;
    l.passKey = hostKey();
    return l;
  }

  // The reply to `fill` from a client named by `id` and `pass`.
  wire::Reply::Reader callAs(ClientId id, const ClientPass& pass,
                             const std::function<void(wire::Request::Builder)>& fill) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, ++requestId_);
    envelope.setClientId(id.value);
    envelope.setClientPass(capnp::Data::Reader(pass.data(), pass.size()));
    fill(envelope.initRequest());
    zmq::message_t frame = encodeFrame(builder);
    host_.handle("peer", InboundMessage::decode(frame, FrameLimits{}).value());
    runPool();
    return lastReply();
  }
  Status start(ClientId id, const ClientPass& pass, std::uint64_t* session = nullptr) {
    auto reply = callAs(id, pass, [](wire::Request::Builder r) {
      auto start = r.initStartSession();
      start.setSessionType("noop");
      start.initBenchmark().setUri("benchmark://pass/a");
    });
    if (session != nullptr && reply.isSessionStarted()) {
      *session = reply.getSessionStarted().getSessionId();
    }
    return errorOf(reply);
  }
  Status step(ClientId id, const ClientPass& pass, std::uint64_t session) {
    return errorOf(callAs(id, pass, [&](wire::Request::Builder r) {
      r.initStep().setSessionId(session);
      toWire(Value(std::int64_t{1}), r.getStep().initActions(1)[0]);
    }));
  }
};

TEST_F(ClientPassHostTest, APassNamesItsClientOnlyOnTheWorkerWhoseKeyMadeIt) {
  const ClientId owner = testClientId(1), intruder = testClientId(2);
  const ClientPass pass = clientPass(hostKey(), owner);
  std::uint64_t session = 0;
  ASSERT_TRUE(start(owner, pass, &session).ok());
  ASSERT_TRUE(step(owner, pass, session).ok());
  // The owner's secret names the same client: its session answers it too.
  send([&](wire::Request::Builder r) {
    r.initStep().setSessionId(session);
    toWire(Value(std::int64_t{1}), r.getStep().initActions(1)[0]);
  });
  runPool();
  EXPECT_TRUE(errorOf(lastReply()).ok()) << errorOf(lastReply()).toString();

  // Captured on another worker: the owner's pass there, made with its key.
  const ClientPass elsewhere = clientPass(PassKey::draw(), owner);
  // A step is answered as for an unknown session; a start says what to present.
  EXPECT_EQ(step(owner, elsewhere, session).code(), ErrorCode::kNotFound);
  Status refused = start(owner, elsewhere);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("clientPass"), std::string::npos) << refused.toString();
  // The owner's pass here, claimed for another id; the intruder's own pass.
  EXPECT_FALSE(step(intruder, pass, session).ok());
  EXPECT_FALSE(step(intruder, clientPass(hostKey(), intruder), session).ok());
  Status ended = errorOf(callAs(owner, elsewhere, [&](wire::Request::Builder r) {
    r.initEndSession().setSessionId(session);
  }));
  EXPECT_FALSE(ended.ok());
  // None of it touched the session.
  EXPECT_TRUE(step(owner, pass, session).ok());
}

}  // namespace
}  // namespace kiln
