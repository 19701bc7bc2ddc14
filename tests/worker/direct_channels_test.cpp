// DirectChannels against real sockets: the abstract listener and the TCP
// listener (every test runs on both), client sockets connecting to them as
// client/zmq_channel.cpp does, and the worker side driven by a ReadinessPoll
// loop in the test's own thread with a fake clock.
#include "worker/direct_channels.h"
#include "common/transport/abstract_socket.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/base/wire_convert.h"
#include "common/transport/tcp_stream.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

constexpr int kMaxTurns = 100;  // every wait below is bounded by this many loop turns

std::string frameText(const zmq::message_t& frame) {
  return std::string(frame.data<char>(), frame.size());
}

std::string getVersionRequest(std::uint64_t requestId) {
  capnp::MallocMessageBuilder builder;
  initEnvelope(builder, requestId).initRequest().initGetVersion();
  return frameText(encodeFrame(builder));
}

std::string uniqueName() {
  static std::atomic<int> counter{0};
  return "kiln-direct-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

enum class Transport { kLocal, kTcp };

// The worker's side: a DirectChannels listening on `transport` and the loop
// that drives it.
struct Worker {
  FakeClock clock;
  std::unique_ptr<DirectChannels> channels;
  std::vector<std::pair<std::string, InboundMessage>> delivered;
  bool tcp;

  explicit Worker(Transport transport, FrameLimits limits = {})
      : channels(std::make_unique<DirectChannels>(limits, clock, makeNullLogger("direct"))),
        tcp(transport == Transport::kTcp) {
    Status listening =
        tcp ? channels->listenTcp("127.0.0.1", 0) : channels->listenLocal(uniqueName());
    EXPECT_TRUE(listening.ok()) << listening.toString();
    if (!listening.ok()) channels.reset();
  }

  // Where its clients connect.
  const std::string& address() const { return tcp ? channels->tcpAddress() : channels->address(); }

  // One turn of the worker's poll loop.
  void turn(std::chrono::milliseconds wait = 5ms) {
    ReadinessPoll poll;
    channels->addTo(poll);
    (void)poll.wait(wait);
    channels->onReady(poll, [this](const std::string& route, InboundMessage message) {
      delivered.emplace_back(route, std::move(message));
    });
  }

  bool turnUntilDelivered(std::size_t count) {
    for (int i = 0; i < kMaxTurns && delivered.size() < count; ++i) turn();
    return delivered.size() >= count;
  }

  bool turnUntilConnections(std::size_t count) {
    for (int i = 0; i < kMaxTurns && channels->connections() != count; ++i) turn();
    return channels->connections() == count;
  }

  std::string grantToken() {
    auto granted = channels->grant(tcp);
    EXPECT_TRUE(granted.ok()) << granted.status().toString();
    if (!granted.ok()) return {};
    EXPECT_EQ(granted->address, address());
    return granted->token;
  }
};

// A client's end, connected the way client/zmq_channel.cpp connectDirect does.
class Client {
 public:
  explicit Client(const std::string& address) {
    if (auto tcp = splitTcpEndpoint(address)) {
      auto connected = connectTcp(tcp->host, tcp->port, std::chrono::steady_clock::now() + 2s);
      EXPECT_TRUE(connected.ok()) << connected.status().toString();
      if (connected.ok()) fd_ = connected->release();
      return;
    }
    EXPECT_TRUE(address.size() >= 2 && address[0] == '@') << address;
    auto target = abstractAddress(std::string_view(address).substr(1));
    EXPECT_TRUE(target.ok()) << address;
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    if (target.ok()) {
      EXPECT_EQ(::connect(fd_, target->get(), target->size), 0) << std::strerror(errno);
    }
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  void sendFrame(const std::string& bytes) { sendFrames({bytes}); }
  // All in one write, so that the worker reads them together.
  void sendFrames(const std::vector<std::string>& frames) {
    StreamFrameWriter writer;
    for (const std::string& frame : frames) writer.queue(frame.data(), frame.size());
    Status sent = writer.flushUntil(fd_, std::chrono::steady_clock::now() + 2s);
    EXPECT_TRUE(sent.ok()) << sent.toString();
  }
  void sendRaw(const std::string& bytes) {
    EXPECT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  // The next frame from the worker, turning its loop meanwhile.
  std::optional<std::string> awaitFrame(Worker& worker) {
    for (int i = 0; i < kMaxTurns && frames_.empty(); ++i) {
      Status read = reader_.readAvailable(fd_, frames_);
      if (!read.ok() || !frames_.empty()) break;
      worker.turn(1ms);
    }
    if (frames_.empty()) return std::nullopt;
    std::string frame = std::move(frames_.front());
    frames_.erase(frames_.begin());
    return frame;
  }

  // True once the worker closed this connection: a read returns 0. Turns the
  // worker's loop meanwhile; bytes that arrive first are discarded.
  bool closedByWorker(Worker& worker) {
    for (int i = 0; i < kMaxTurns; ++i) {
      worker.turn(1ms);
      pollfd readable{fd_, POLLIN, 0};
      if (::poll(&readable, 1, 5) <= 0) continue;
      char buffer[4096];
      const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (got == 0) return true;
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return true;  // e.g. reset
    }
    return false;
  }

  // True while the connection is open and quiet: a read would block.
  bool openAndQuiet() const {
    char byte = 0;
    const ssize_t got = ::recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

 private:
  int fd_ = -1;
  StreamFrameReader reader_{1 << 20};
  std::vector<std::string> frames_;
};

// Connects a client and authenticates it with a fresh token.
std::unique_ptr<Client> authenticatedClient(Worker& worker) {
  auto client = std::make_unique<Client>(worker.address());
  client->sendFrame(worker.grantToken());
  return client;
}

// Sends a request and returns the route it was delivered with ("" if none).
std::string roundTripRequest(Worker& worker, Client& client, std::uint64_t requestId) {
  const std::size_t before = worker.delivered.size();
  client.sendFrame(getVersionRequest(requestId));
  if (!worker.turnUntilDelivered(before + 1)) return {};
  const auto& [route, message] = worker.delivered.back();
  EXPECT_EQ(message.envelope().getRequestId(), requestId);
  EXPECT_TRUE(message.envelope().isRequest() && message.envelope().getRequest().isGetVersion());
  return route;
}

// Two authenticated clients, each with one request delivered: their routes.
struct TwoClients {
  std::unique_ptr<Client> first, second;
  std::string firstRoute, secondRoute;
};
TwoClients twoClientsWithRoutes(Worker& worker) {
  TwoClients two{authenticatedClient(worker), authenticatedClient(worker), {}, {}};
  two.firstRoute = roundTripRequest(worker, *two.first, 1);
  two.secondRoute = roundTripRequest(worker, *two.second, 2);
  EXPECT_FALSE(two.firstRoute.empty());
  EXPECT_NE(two.firstRoute, two.secondRoute);
  return two;
}

class DirectChannelsTest : public ::testing::TestWithParam<Transport> {};

TEST_P(DirectChannelsTest, AGrantedTokenOpensAChannelWithADirectRoute) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  EXPECT_EQ(worker.address().rfind(worker.tcp ? "tcp://127.0.0.1:" : "@kiln-direct-test-", 0), 0u);
  Client client(worker.address());
  // The token and the first request in one write: both are read in one go.
  std::string token = worker.grantToken();
  ASSERT_EQ(token.size(), 16u);
  client.sendFrames({token, getVersionRequest(41)});
  ASSERT_TRUE(worker.turnUntilDelivered(1));
  const std::string route = worker.delivered[0].first;
  EXPECT_TRUE(DirectChannels::isDirectRoute(route));
  EXPECT_NE(route.size(), 5u);  // never a ZeroMQ ROUTER id
  EXPECT_EQ(route[0], '\0');
  EXPECT_EQ(worker.delivered[0].second.envelope().getRequestId(), 41u);

  // The reply reaches the client.
  worker.channels->send(route, encodeErrorReply(41, notFound("no such thing")));
  std::optional<std::string> reply = client.awaitFrame(worker);
  ASSERT_TRUE(reply.has_value());
  auto decoded = InboundMessage::decode(reply->data(), reply->size(), FrameLimits{});
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_EQ(decoded->envelope().getRequestId(), 41u);
  ASSERT_TRUE(decoded->envelope().isReply() && decoded->envelope().getReply().isError());
  EXPECT_EQ(fromWire(decoded->envelope().getReply().getError()).code(), ErrorCode::kNotFound);

  // Later requests (in their own writes) use the same route.
  EXPECT_EQ(roundTripRequest(worker, client, 42), route);
  EXPECT_EQ(worker.channels->connections(), 1u);
}

// The loop's quick look after a reply (WorkerServer::run) reads the
// connection that got the reply, and only that one, without a poll.
TEST_P(DirectChannelsTest, ALookAfterAReplyReadsThatClientsNextRequestOnly) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  TwoClients two = twoClientsWithRoutes(worker);
  Client* hot = two.first.get();
  Client* other = two.second.get();
  const std::string& hotRoute = two.firstRoute;
  const std::string& otherRoute = two.secondRoute;
  auto look = [&] {
    return worker.channels->readLastReplied([&](const std::string& route, InboundMessage m) {
      worker.delivered.emplace_back(route, std::move(m));
    });
  };
  // Nothing replied yet: nothing to look at.
  EXPECT_FALSE(look());
  worker.channels->send(hotRoute, encodeErrorReply(1, notFound("x")));
  ASSERT_TRUE(hot->awaitFrame(worker).has_value());
  EXPECT_FALSE(look());  // quiet
  if (worker.tcp) {
    // Across hosts the loop does not look: its client's next request is a
    // network round trip away. The request waits for the poll.
    EXPECT_EQ(worker.channels->repliesSent(), 0u);
    hot->sendFrame(getVersionRequest(4));
    std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(look());
    ASSERT_TRUE(worker.turnUntilDelivered(3));
    EXPECT_EQ(worker.delivered.back().first, hotRoute);
    return;
  }
  EXPECT_EQ(worker.channels->repliesSent(), 1u);
  // The other client's request is left for the poll.
  other->sendFrame(getVersionRequest(3));
  hot->sendFrame(getVersionRequest(4));
  // The client's bytes reach the socket soon after the write: look a few times.
  auto lookUntilSomething = [&] {
    for (int i = 0; i < kMaxTurns; ++i) {
      if (look()) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  };
  ASSERT_TRUE(lookUntilSomething());
  ASSERT_EQ(worker.delivered.size(), 3u);
  EXPECT_EQ(worker.delivered.back().first, hotRoute);
  EXPECT_EQ(worker.delivered.back().second.envelope().getRequestId(), 4u);
  ASSERT_TRUE(worker.turnUntilDelivered(4));
  EXPECT_EQ(worker.delivered.back().first, otherRoute);
  // A client that goes away ends the look too (the connection is closed).
  worker.channels->send(hotRoute, encodeErrorReply(4, notFound("x")));
  ASSERT_TRUE(hot->awaitFrame(worker).has_value());
  hot->close();
  EXPECT_TRUE(lookUntilSomething());
  EXPECT_EQ(worker.channels->connections(), 1u);
  EXPECT_FALSE(look());  // its connection is gone
}

TEST(DirectRoutesTest, ZeroMqRoutesAreNotDirect) {
  EXPECT_FALSE(DirectChannels::isDirectRoute(std::string("\0abcd", 5)));  // a ROUTER id
  EXPECT_FALSE(DirectChannels::isDirectRoute(""));
  EXPECT_FALSE(DirectChannels::isDirectRoute(std::string("\0direct-", 8)));
  EXPECT_FALSE(DirectChannels::isDirectRoute("direct-1"));
  EXPECT_TRUE(DirectChannels::isDirectRoute(std::string("\0direct-1", 9)));
}

TEST_P(DirectChannelsTest, ATokenOpensOneChannelOnly) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  const std::string token = worker.grantToken();
  Client first(worker.address());
  first.sendFrame(token);
  const std::string route = roundTripRequest(worker, first, 1);
  ASSERT_FALSE(route.empty());

  Client second(worker.address());
  second.sendFrame(token);
  second.sendFrame(getVersionRequest(2));
  EXPECT_TRUE(second.closedByWorker(worker));
  EXPECT_EQ(worker.delivered.size(), 1u);  // the second one's request never arrived
  // The first channel is not disturbed.
  EXPECT_EQ(roundTripRequest(worker, first, 3), route);
}

TEST_P(DirectChannelsTest, AWrongTokenIsClosed) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  std::string token = worker.grantToken();
  token[0] = static_cast<char>(token[0] ^ 1);
  Client client(worker.address());
  client.sendFrame(token);
  client.sendFrame(getVersionRequest(1));
  EXPECT_TRUE(client.closedByWorker(worker));
  EXPECT_TRUE(worker.delivered.empty());
  EXPECT_EQ(worker.channels->connections(), 0u);
}

TEST_P(DirectChannelsTest, AnExpiredTokenIsClosed) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  const std::string token = worker.grantToken();
  worker.clock.advance(DirectChannels::kTokenLifetime + 1s);
  Client client(worker.address());
  client.sendFrame(token);
  client.sendFrame(getVersionRequest(1));
  EXPECT_TRUE(client.closedByWorker(worker));
  EXPECT_TRUE(worker.delivered.empty());
}

TEST_P(DirectChannelsTest, ATokenUsedJustBeforeItExpiresWorks) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  const std::string token = worker.grantToken();
  worker.clock.advance(DirectChannels::kTokenLifetime - 1s);
  Client client(worker.address());
  client.sendFrame(token);
  EXPECT_FALSE(roundTripRequest(worker, client, 5).empty());
  EXPECT_TRUE(client.openAndQuiet());
}

TEST_P(DirectChannelsTest, AConnectionThatSendsNoTokenIsClosedAfterTheLifetime) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  Client silent(worker.address());
  Client halfToken(worker.address());
  halfToken.sendRaw(std::string("\x10\x00", 2));  // half a header
  ASSERT_TRUE(worker.turnUntilConnections(2));
  for (int i = 0; i < 5; ++i) worker.turn(1ms);
  EXPECT_TRUE(silent.openAndQuiet());
  EXPECT_TRUE(halfToken.openAndQuiet());
  EXPECT_EQ(worker.channels->connections(), 2u);

  worker.clock.advance(DirectChannels::kTokenLifetime + 1ms);
  EXPECT_TRUE(silent.closedByWorker(worker));
  EXPECT_TRUE(halfToken.closedByWorker(worker));
  EXPECT_EQ(worker.channels->connections(), 0u);
}

TEST_P(DirectChannelsTest, AnAuthenticatedConnectionOutlivesTheTokenLifetime) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  auto client = authenticatedClient(worker);
  ASSERT_FALSE(roundTripRequest(worker, *client, 1).empty());
  worker.clock.advance(DirectChannels::kTokenLifetime * 3);
  for (int i = 0; i < 5; ++i) worker.turn(1ms);
  EXPECT_TRUE(client->openAndQuiet());
  EXPECT_FALSE(roundTripRequest(worker, *client, 2).empty());
}

// Frames of at most 4 KiB, so that a test can exceed the limit cheaply.
FrameLimits smallFrames() {
  FrameLimits limits;
  limits.maxMessageBytes = 4096;
  return limits;
}

// A frame over the limit is read past as it comes, never buffered: its
// sender keeps its channel, and others are served meanwhile.
TEST_P(DirectChannelsTest, AnOversizedFrameIsReadPastAndOthersAreServed) {
  Worker worker(GetParam(), smallFrames());
  ASSERT_TRUE(worker.channels);
  auto bad = authenticatedClient(worker);
  auto good = authenticatedClient(worker);
  ASSERT_FALSE(roundTripRequest(worker, *bad, 1).empty());
  const std::string goodRoute = roundTripRequest(worker, *good, 2);
  ASSERT_FALSE(goodRoute.empty());

  // A header claiming 1 GiB, and a little of its body.
  bad->sendRaw(std::string("\x00\x00\x00\x40", 4) + "body");
  for (int i = 0; i < 5; ++i) worker.turn(1ms);
  EXPECT_EQ(worker.channels->connections(), 2u);
  EXPECT_TRUE(bad->openAndQuiet());

  EXPECT_EQ(roundTripRequest(worker, *good, 3), goodRoute);
  worker.channels->send(goodRoute, encodeErrorReply(3, okStatus()));
  std::optional<std::string> reply = good->awaitFrame(worker);
  ASSERT_TRUE(reply.has_value());
  auto decoded = InboundMessage::decode(reply->data(), reply->size(), FrameLimits{});
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->envelope().getRequestId(), 3u);
}

// Issue 48: a benchmark over the limit was answered "overloaded: retry
// later" (the worker closed the channel under the client's write). Now the
// request itself hears invalid argument, with its size, the limit and the
// flag that sets it, and the channel goes on.
TEST_P(DirectChannelsTest, ARequestOverTheLimitIsAnsweredWithItsSizeAndTheFlag) {
  Worker worker(GetParam(), smallFrames());
  ASSERT_TRUE(worker.channels);
  auto client = authenticatedClient(worker);
  ASSERT_FALSE(roundTripRequest(worker, *client, 1).empty());
  capnp::MallocMessageBuilder builder;
  auto start = initEnvelope(builder, 77).initRequest().initStartSession();
  start.setSessionType("noop");
  start.initBenchmark().setProgram(kj::heapArray<kj::byte>(64 * 1024));
  const std::string big = frameText(encodeFrame(builder));
  ASSERT_GT(big.size(), 4096u);
  client->sendFrame(big);
  std::optional<std::string> reply = client->awaitFrame(worker);
  ASSERT_TRUE(reply.has_value());
  auto decoded = InboundMessage::decode(reply->data(), reply->size(), FrameLimits{});
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_EQ(decoded->envelope().getRequestId(), 77u);
  ASSERT_TRUE(decoded->envelope().getReply().isError());
  const Status refused = fromWire(decoded->envelope().getReply().getError());
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument) << refused.toString();
  EXPECT_NE(refused.message().find(std::to_string(big.size()) + " bytes"), std::string::npos)
      << refused.toString();
  EXPECT_NE(refused.message().find("limit of 4096 bytes"), std::string::npos);
  EXPECT_NE(refused.message().find("--max-message-bytes"), std::string::npos);
  EXPECT_EQ(worker.delivered.size(), 1u);
  EXPECT_FALSE(roundTripRequest(worker, *client, 2).empty());
  EXPECT_TRUE(client->openAndQuiet());
}

TEST_P(DirectChannelsTest, AMalformedFrameGetsAnErrorReplyAndTheChannelStays) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  auto client = authenticatedClient(worker);
  client->sendFrame("this is not a Cap'n Proto message");
  std::optional<std::string> reply = client->awaitFrame(worker);
  ASSERT_TRUE(reply.has_value());
  auto decoded = InboundMessage::decode(reply->data(), reply->size(), FrameLimits{});
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_EQ(decoded->envelope().getRequestId(), 0u);
  ASSERT_TRUE(decoded->envelope().isReply() && decoded->envelope().getReply().isError());
  EXPECT_EQ(fromWire(decoded->envelope().getReply().getError()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(worker.delivered.empty());

  EXPECT_FALSE(roundTripRequest(worker, *client, 9).empty());
  EXPECT_TRUE(client->openAndQuiet());
}

TEST_P(DirectChannelsTest, SendingToARouteThatIsGoneDoesNothing) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  TwoClients two = twoClientsWithRoutes(worker);
  Client* leaving = two.first.get();
  Client* staying = two.second.get();
  const std::string& goneRoute = two.firstRoute;
  const std::string& stayingRoute = two.secondRoute;

  leaving->close();
  ASSERT_TRUE(worker.turnUntilConnections(1));
  worker.channels->send(goneRoute, encodeErrorReply(1, okStatus()));
  worker.channels->send(std::string("\0direct-999999", 14), encodeErrorReply(1, okStatus()));
  for (int i = 0; i < 5; ++i) worker.turn(1ms);
  EXPECT_EQ(worker.channels->connections(), 1u);
  // Nothing went to the other connection.
  EXPECT_TRUE(staying->openAndQuiet());
  EXPECT_EQ(roundTripRequest(worker, *staying, 3), stayingRoute);
}

TEST_P(DirectChannelsTest, GrantRefusesOnceTooManyTokensAreLive) {
  Worker worker(GetParam());
  ASSERT_TRUE(worker.channels);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < DirectChannels::kMaxConnections; ++i) {
    auto granted = worker.channels->grant(worker.tcp);
    ASSERT_TRUE(granted.ok()) << "grant " << i << ": " << granted.status().toString();
    tokens.push_back(granted->token);
  }
  auto refused = worker.channels->grant(worker.tcp);
  EXPECT_EQ(refused.status().code(), ErrorCode::kOverloaded) << refused.status().toString();
  // Tokens are random: no two alike.
  std::sort(tokens.begin(), tokens.end());
  EXPECT_EQ(std::adjacent_find(tokens.begin(), tokens.end()), tokens.end());

  // Using one frees its place.
  Client client(worker.address());
  client.sendFrame(tokens[0]);
  EXPECT_FALSE(roundTripRequest(worker, client, 1).empty());
  EXPECT_TRUE(worker.channels->grant(worker.tcp).ok());
  EXPECT_EQ(worker.channels->grant(worker.tcp).status().code(), ErrorCode::kOverloaded);

  // Expired tokens free theirs.
  worker.clock.advance(DirectChannels::kTokenLifetime + 1s);
  EXPECT_TRUE(worker.channels->grant(worker.tcp).ok());
}

TEST(DirectChannelsListenTest, ListeningOnANameInUseFails) {
  FakeClock clock;
  const std::string name = uniqueName();
  DirectChannels first({}, clock, makeNullLogger("direct"));
  ASSERT_TRUE(first.listenLocal(name).ok());
  DirectChannels second({}, clock, makeNullLogger("direct"));
  EXPECT_EQ(second.listenLocal(name).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(second.listenLocal("").code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(second.listening());
}

TEST(DirectChannelsListenTest, AGrantNamesOnlyAListenerThatRuns) {
  FakeClock clock;
  DirectChannels local({}, clock, makeNullLogger("direct"));
  ASSERT_TRUE(local.listenLocal(uniqueName()).ok());
  EXPECT_TRUE(local.grant(false).ok());
  EXPECT_EQ(local.grant(true).status().code(), ErrorCode::kUnimplemented);

  DirectChannels tcp({}, clock, makeNullLogger("direct"));
  ASSERT_TRUE(tcp.listenTcp("127.0.0.1", 0).ok());
  EXPECT_EQ(tcp.grant(false).status().code(), ErrorCode::kUnimplemented);
  auto granted = tcp.grant(true);
  ASSERT_TRUE(granted.ok()) << granted.status().toString();
  auto address = splitTcpEndpoint(granted->address);
  ASSERT_TRUE(address.has_value()) << granted->address;
  EXPECT_EQ(address->host, "127.0.0.1");
  EXPECT_NE(address->port, 0);
  // A host that is no address is refused clearly.
  DirectChannels bad({}, clock, makeNullLogger("direct"));
  EXPECT_EQ(bad.listenTcp("no-such-host.invalid", 0).code(), ErrorCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(BothListeners, DirectChannelsTest,
                         ::testing::Values(Transport::kLocal, Transport::kTcp),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kTcp ? "Tcp" : "Local";
                         });

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(DirectTcpFlagTest, AutoOffOrAPortAndNothingElse) {
  auto automatic = parseDirectTcp("auto");
  ASSERT_TRUE(automatic.ok());
  EXPECT_TRUE(automatic->enabled);
  EXPECT_EQ(automatic->port, 0);
  auto off = parseDirectTcp("off");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->enabled);
  auto fixed = parseDirectTcp("7801");
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(fixed->enabled);
  EXPECT_EQ(fixed->port, 7801);
  for (const char* bad : {"", "0", "65536", "78o1", "-1", "on", " 7801"}) {
    auto refused = parseDirectTcp(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("--direct-tcp"), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln
