// The isolation link's decoders: every message as its sender writes it,
// the near misses each side must refuse, and a reply whose frame is broken
// deep inside, which the host once read outside any catch.
#include "nesting/isolation_messages.h"

#include <gtest/gtest.h>

#include <capnp/message.h>

#include <cstring>

#include "tests/support/test_identity.h"

namespace kiln::nesting::isolation {
namespace {

std::string u64(std::uint64_t value) {
  std::string out;
  putU64(out, value);
  return out;
}

std::string frameOf(capnp::MallocMessageBuilder& builder) {
  zmq::message_t frame = encodeFrame(builder);
  return std::string(frame.data<char>(), frame.size());
}

Result<ChildMessage> fromChild(const std::vector<std::string>& parts,
                               const FrameLimits& limits = {}) {
  return decodeChildMessage(std::vector<std::string_view>(parts.begin(), parts.end()), limits);
}

Result<HostMessage> fromHost(const std::vector<std::string>& parts,
                             const FrameLimits& limits = {}) {
  return decodeHostMessage(std::vector<std::string_view>(parts.begin(), parts.end()), limits);
}

std::string sessionStartedReply(std::uint64_t requestId, std::uint64_t session) {
  capnp::MallocMessageBuilder builder;
  initEnvelope(builder, requestId).initReply().initSessionStarted().setSessionId(session);
  return frameOf(builder);
}

TEST(IsolationMessagesTest, ChildMessagesDecodeAsSent) {
  EXPECT_TRUE(std::holds_alternative<Hello>(*fromChild({"h"})));
  EXPECT_TRUE(std::holds_alternative<AcquireToken>(*fromChild({"a"})));

  auto reply = fromChild({"r", "client-1", sessionStartedReply(7, 3)});
  ASSERT_TRUE(reply.ok()) << reply.status().toString();
  const auto& relayed = std::get<ChildReply>(*reply);
  EXPECT_EQ(relayed.routingId, "client-1");
  ASSERT_TRUE(relayed.summary.has_value());
  EXPECT_EQ(relayed.summary->requestId, 7u);
  EXPECT_EQ(relayed.summary->kind, ReplySummary::Kind::kSessionStarted);
  EXPECT_EQ(relayed.summary->sessionId, 3u);

  EXPECT_EQ(std::get<TokenBack>(*fromChild({"t", u64(1500)})).ran.count(), 1500);

  std::string records = u64(5) + u64(1) + u64(2) + u64(3) + u64(42);
  auto loads = fromChild({"l", records + records});
  ASSERT_TRUE(loads.ok()) << loads.status().toString();
  ASSERT_EQ(std::get<Loads>(*loads).workers.size(), 2u);
  const WorkerLoad& load = std::get<Loads>(*loads).workers[1];
  EXPECT_EQ(load.workerId, 5u);
  EXPECT_EQ(load.load.liveSessions, 1u);
  EXPECT_EQ(load.load.busySlots, 2u);
  EXPECT_EQ(load.load.queuedRequests, 3u);
  EXPECT_EQ(load.load.stepsTotal, 42u);
  EXPECT_TRUE(std::get<Loads>(*fromChild({"l", ""})).workers.empty());

  auto released = fromChild({"d", u64(5), u64(2)});
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(std::get<Released>(*released).workerId, 5u);
  EXPECT_EQ(std::get<Released>(*released).sessionsEnded, 2u);
}

TEST(IsolationMessagesTest, MalformedChildMessagesAreRefused) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {""},
      {"hh"},
      {"z"},
      {"h", "extra"},
      {"r", "client-1"},
      {"t", u64(1).substr(0, 7)},
      {"t", u64(std::uint64_t{1} << 63)},  // a negative duration
      {"l", std::string(39, '\0')},
      {"l", u64(5) + u64(std::uint64_t{1} << 32) + u64(0) + u64(0) + u64(0)},
      {"d", u64(5)},
      {"d", u64(5), u64(std::uint64_t{1} << 32)},
  };
  for (const auto& parts : cases) {
    auto decoded = fromChild(parts);
    ASSERT_FALSE(decoded.ok()) << parts.size() << " parts, first '"
                               << (parts.empty() ? "" : parts[0]) << "'";
    EXPECT_EQ(decoded.status().code(), ErrorCode::kInvalidArgument);
  }
}

// A reply that decodes (its root is sound) but whose sessionStarted pointer
// points far past the end of the message. Found by trying each word of a
// valid reply in turn, so that it does not depend on Cap'n Proto's layout.
std::string replyWithBrokenSessionPointer() {
  const std::string valid = sessionStartedReply(7, 3);
  const std::uint64_t farPointer = (std::uint64_t{1} << 32) | (std::uint64_t{1} << 22);
  for (std::size_t at = 16; at + 8 <= valid.size(); at += 8) {
    std::string broken = valid;
    std::memcpy(broken.data() + at, &farPointer, 8);
    auto message = InboundMessage::decode(broken.data(), broken.size(), FrameLimits{});
    if (!message.ok() || !message->envelope().isReply()) continue;
    try {
      (void)message->envelope().getReply().getSessionStarted().getSessionId();
    } catch (const kj::Exception&) {
      return broken;
    }
  }
  return {};
}

TEST(IsolationMessagesTest, AReplyBrokenDeepInsideIsRelayedWithoutASummary) {
  std::string broken = replyWithBrokenSessionPointer();
  ASSERT_FALSE(broken.empty()) << "no word of the reply makes its session id unreadable";
  // Reading it as the host once did throws, and the host's loop did not catch it.
  auto message = InboundMessage::decode(broken.data(), broken.size(), FrameLimits{});
  ASSERT_TRUE(message.ok());
  EXPECT_THROW((void)message->envelope().getReply().getSessionStarted().getSessionId(),
               kj::Exception);
  auto decoded = fromChild({"r", "client-1", broken});
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_EQ(std::get<ChildReply>(*decoded).routingId, "client-1");
  EXPECT_FALSE(std::get<ChildReply>(*decoded).summary.has_value());
  // Not a reply at all, or not a frame: relayed without a summary too.
  EXPECT_FALSE(std::get<ChildReply>(*fromChild({"r", "c", "garbage!"})).summary.has_value());
}

TEST(IsolationMessagesTest, HostMessagesDecodeAsSent) {
  capnp::MallocMessageBuilder step;
  auto envelope = initEnvelope(step, 9);
  envelope.setTarget(5);
  envelope.initRequest().initStep().setSessionId(3);
  auto request = fromHost({"R", "client-1", u64(9), frameOf(step)});
  ASSERT_TRUE(request.ok()) << request.status().toString();
  EXPECT_EQ(std::get<ForwardedRequest>(*request).routingId, "client-1");
  EXPECT_EQ(std::get<ForwardedRequest>(*request).message.envelope().getTarget(), 5u);

  capnp::MallocMessageBuilder create;
  UnderlyingSpec spec{5, "exp-a", 2, 4, {"noop", "llvm"}};
  toWire(spec, initEnvelope(create, 0).initRequest().initCreateWorker().initSpec());
  auto created = fromHost({"C", frameOf(create)});
  ASSERT_TRUE(created.ok()) << created.status().toString();
  const UnderlyingSpec& decoded = std::get<CreateWorker>(*created).spec;
  EXPECT_EQ(decoded.workerId, 5u);
  EXPECT_EQ(decoded.experiment, "exp-a");
  EXPECT_EQ(decoded.weight, 2u);
  EXPECT_EQ(decoded.maxSessions, 4u);
  EXPECT_EQ(decoded.sessionTypes, (std::vector<std::string>{"noop", "llvm"}));

  EXPECT_EQ(std::get<ReleaseWorker>(*fromHost({"D", u64(5)})).workerId, 5u);
  EXPECT_TRUE(std::holds_alternative<GrantToken>(*fromHost({"G"})));
  EXPECT_EQ(std::get<KeepAlive>(*fromHost({"K", u64(11)})).clientId, 11u);
  auto drop = fromHost({"F", u64(2'500'000'000), "cut off for 2500 ms"});
  ASSERT_TRUE(drop.ok()) << drop.status().toString();
  EXPECT_EQ(std::get<DropSilentClients>(*drop).silentFor, std::chrono::milliseconds(2500));
  EXPECT_EQ(std::get<DropSilentClients>(*drop).why, "cut off for 2500 ms");

  capnp::MallocMessageBuilder add;
  auto addEnvelope = initEnvelope(add, 0);
  auto benchmark = addEnvelope.initRequest().initAddBenchmark().initBenchmarks(1)[0];
  benchmark.setUri("benchmark://user-v0/a");
  benchmark.setProgram(kj::arrayPtr(reinterpret_cast<const kj::byte*>("abc"), 3));
  // Without the client's secret the bytes would belong to nobody: refused.
  EXPECT_FALSE(fromHost({"B", frameOf(add)}).ok());
  testsupport::setTestClient(addEnvelope, 3);
  auto added = fromHost({"B", frameOf(add)});
  ASSERT_TRUE(added.ok()) << added.status().toString();
  EXPECT_EQ(std::get<AddBenchmarks>(*added).client, testsupport::testClientId(3));
  ASSERT_EQ(std::get<AddBenchmarks>(*added).programs.size(), 1u);
  EXPECT_EQ(std::get<AddBenchmarks>(*added).programs[0].first, "benchmark://user-v0/a");
  EXPECT_EQ(*std::get<AddBenchmarks>(*added).programs[0].second, "abc");
}

TEST(IsolationMessagesTest, MalformedHostMessagesAreRefused) {
  capnp::MallocMessageBuilder step;
  initEnvelope(step, 9).initRequest().initStep().setSessionId(3);
  const std::vector<std::vector<std::string>> cases = {
      {"R", "client-1"},
      {"R", "client-1", "not a frame"},
      {"R", "client-1", "short", "not a frame"},  // the request id is not a u64
      {"C"},
      {"C", frameOf(step)},  // a frame, but not createWorker
      {"B", frameOf(step)},
      {"D", u64(5) + "x"},
      {"G", ""},
      {"K", ""},
      {"F", u64(1)},                         // no reason
      {"F", "short", "why"},                 // not a u64
      {"F", u64(~std::uint64_t{0}), "why"},  // a span no clock holds
      {"h"},                                 // a child's kind
  };
  for (const auto& parts : cases) {
    auto decoded = fromHost(parts);
    ASSERT_FALSE(decoded.ok()) << parts.size() << " parts, first '" << parts[0] << "'";
    EXPECT_EQ(decoded.status().code(), ErrorCode::kInvalidArgument);
  }
}

// Issue 48: frames are read with the limits the host was given
// (--max-message-bytes), not with the default 64 MiB: a request the host
// accepted reaches its child, and a reply the child sent reaches its host.
TEST(IsolationMessagesTest, FramesAreReadWithTheOperatorsLimits) {
  capnp::MallocMessageBuilder start;
  auto envelope = initEnvelope(start, 12);
  auto program = envelope.initRequest().initStartSession().initBenchmark().initProgram(
      (std::size_t{64} << 20) + 8);
  std::memset(program.begin(), 'x', program.size());
  const std::string large = frameOf(start);
  FrameLimits raised;
  raised.maxMessageBytes = std::size_t{128} << 20;

  auto request = fromHost({"R", "client-1", u64(12), large}, raised);
  ASSERT_TRUE(request.ok()) << request.status().toString();
  ASSERT_TRUE(std::holds_alternative<ForwardedRequest>(*request));
  EXPECT_EQ(std::get<ForwardedRequest>(*request).message.envelope().getRequestId(), 12u);

  // The default limit is what the child used to read with: it dropped the
  // request unanswered.
  EXPECT_TRUE(std::holds_alternative<UnreadableRequest>(
      *fromHost({"R", "client-1", u64(12), large}, FrameLimits{})));

  zmq::message_t error =
      encodeErrorReply(12, invalidArgument(std::string((std::size_t{64} << 20) + 8, 'e')));
  const std::string largeReply(error.data<char>(), error.size());
  auto relayed = fromChild({"r", "client-1", largeReply}, raised);
  ASSERT_TRUE(relayed.ok()) << relayed.status().toString();
  ASSERT_TRUE(std::get<ChildReply>(*relayed).summary.has_value());
  EXPECT_EQ(std::get<ChildReply>(*relayed).summary->requestId, 12u);
}

// A reply over the host's limit, which the host could not read, reaches its
// client as an error to the same request naming the flag; a frame that is
// no reply at all goes on as it was.
TEST(IsolationMessagesTest, AReplyOverTheLimitBecomesARefusalOfItsRequest) {
  FrameLimits small;
  small.maxMessageBytes = 256;
  zmq::message_t refused =
      refuseOversizedReply(encodeErrorReply(12, compileError(std::string(1024, 'e'))), small);
  ASSERT_LE(refused.size(), small.maxMessageBytes);
  auto relayed =
      fromChild({"r", "client-1", std::string(refused.data<char>(), refused.size())}, small);
  ASSERT_TRUE(relayed.ok()) << relayed.status().toString();
  ASSERT_TRUE(std::get<ChildReply>(*relayed).summary.has_value());
  EXPECT_EQ(std::get<ChildReply>(*relayed).summary->requestId, 12u);
  auto decoded = InboundMessage::decode(refused, small);
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  auto reply = decoded->envelope().getReply();
  ASSERT_TRUE(reply.isError());
  EXPECT_NE(std::string(reply.getError().getMessage().cStr()).find("--max-message-bytes"),
            std::string::npos);

  const std::string garbage(1024, 'g');
  zmq::message_t kept = refuseOversizedReply(zmq::message_t(garbage.data(), garbage.size()), small);
  EXPECT_EQ(std::string(kept.data<char>(), kept.size()), garbage);
}

// A frame the child cannot read is still answered: the decoder hands back
// the request's routing and request ids beside the reason, never nothing.
TEST(IsolationMessagesTest, AnUnreadableRequestKeepsItsIdsForTheAnswer) {
  capnp::MallocMessageBuilder step;
  initEnvelope(step, 9).initRequest().initStep().setSessionId(3);
  FrameLimits small;
  small.maxMessageBytes = 16;
  for (const std::string& frame : {frameOf(step), std::string("not a frame")}) {
    auto decoded = fromHost({"R", "client-1", u64(9), frame}, small);
    ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
    ASSERT_TRUE(std::holds_alternative<UnreadableRequest>(*decoded));
    const auto& unreadable = std::get<UnreadableRequest>(*decoded);
    EXPECT_EQ(unreadable.routingId, "client-1");
    EXPECT_EQ(unreadable.requestId, 9u);
    EXPECT_EQ(unreadable.why.code(), ErrorCode::kInvalidArgument);
    EXPECT_FALSE(unreadable.why.message().empty());
  }
}

}  // namespace
}  // namespace kiln::nesting::isolation
