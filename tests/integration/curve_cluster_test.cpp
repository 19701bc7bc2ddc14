// A loopback cluster with a cluster key (CURVE): the key holder steps;
// clients without the key or with another cluster's key are refused at once
// with a clear error, and the servers log the refusal; a worker with the
// wrong key cannot register; extra client keys can be authorized; and the
// bytes on the wire, recorded by a TCP relay, are plaintext without a key
// and not with one.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include <kiln/client/client.h>
#include "client/zmq_channel.h"
#include "common/base/wire_convert.h"
#include "common/security/zap_authenticator.h"
#include "tests/support/loopback_cluster.h"
#include "tests/support/wait.h"
#include "worker/noop_session.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

constexpr const char* kCanary = "benchmark://canary/PLAINTEXT-CANARY-7f3a";

using testsupport::waitUntil;

// The shared loopback cluster (testing/loopback_cluster.h) with every byte
// on TCP: the relay test records the wire.
struct Cluster : testsupport::LoopbackCluster {
  explicit Cluster(std::optional<ClusterKeys> keys, std::vector<std::string> authorized = {})
      : LoopbackCluster({std::move(keys), std::move(authorized), Secret{}, /*tcpOnly=*/true}) {}
};

// Forwards TCP connections to `upstreamPort`, keeping a copy of every byte.
class RecordingRelay {
 public:
  explicit RecordingRelay(int upstreamPort) : upstreamPort_(upstreamPort) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address = loopback(0);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    ::listen(listener_, 8);
    socklen_t length = sizeof(address);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~RecordingRelay() {
    stopping_.store(true);
    thread_.join();
    for (auto [a, b] : pairs_) ::close(a), ::close(b);
    ::close(listener_);
  }
  std::string endpoint() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  std::string captured() {
    std::lock_guard lock(mutex_);
    return bytes_;
  }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
  }
  void run() {
    while (!stopping_.load()) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (auto [a, b] : pairs_) fds.push_back({a, POLLIN, 0}), fds.push_back({b, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        int client = ::accept(listener_, nullptr, nullptr);
        int server = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in upstream = loopback(upstreamPort_);
        if (::connect(server, reinterpret_cast<sockaddr*>(&upstream), sizeof(upstream)) == 0) {
          pairs_.emplace_back(client, server);
        } else {
          ::close(client), ::close(server);
        }
      }
      std::vector<bool> closed(pairs_.size(), false);
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto& pair = pairs_[(i - 1) / 2];
        int to = fds[i].fd == pair.first ? pair.second : pair.first;
        char buffer[65536];
        ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
        if (n <= 0) {
          closed[(i - 1) / 2] = true;
          continue;
        }
        std::lock_guard lock(mutex_);
        bytes_.append(buffer, static_cast<std::size_t>(n));
        for (ssize_t sent = 0; sent < n;) {
          ssize_t w = ::write(to, buffer + sent, static_cast<std::size_t>(n - sent));
          if (w <= 0) break;
          sent += w;
        }
      }
      for (std::size_t i = pairs_.size(); i-- > 0;) {
        if (!closed[i]) continue;
        ::close(pairs_[i].first);
        ::close(pairs_[i].second);
        pairs_.erase(pairs_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }

  int upstreamPort_;
  int listener_ = -1;
  int port_ = 0;
  std::vector<std::pair<int, int>> pairs_;  // the relay thread's own
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::string bytes_;
  std::thread thread_;
};

int portOf(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

class CurveClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!curveAvailable()) GTEST_SKIP() << "libzmq without CURVE";
  }
};

TEST_F(CurveClusterTest, KeyHolderStepsAndOthersAreRefusedAtOnceAndLogged) {
  ClusterKeys keys = generateClusterKeys().value();
  Cluster cluster(keys);
  auto holder = cluster.client(keys);
  ASSERT_TRUE(waitUntil([&] { return holder->listCluster().value().size() == 1; }, 10s));
  client::SessionOptions options{"noop", "benchmark://t/1"};
  auto session = holder->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  auto stepped = (*session)->step({Value(std::int64_t{3})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();

  struct Stranger {
    const char* name;
    std::optional<ClusterKeys> keys;
  };
  const Stranger strangers[] = {
      {"no key", std::nullopt},
      {"another cluster's key", generateClusterKeys().value()},
  };
  for (const Stranger& stranger : strangers) {
    SCOPED_TRACE(stranger.name);
    std::uint64_t refusals = cluster.auth->refusals();
    auto client = cluster.client(stranger.keys);
    auto refused = client->listCluster();
    ASSERT_FALSE(refused.ok());
    // Permission denied, not the 20 s request timeout.
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().toString();
    EXPECT_NE(refused.status().message().find("refused by authentication"), std::string::npos)
        << refused.status().toString();
    // Counted each time; logged at most once a while per peer and reason.
    EXPECT_TRUE(waitUntil([&] { return cluster.auth->refusals() > refusals; }, 5s));
  }
  EXPECT_TRUE(cluster.log.contains("refused coordinator connection on tcp://127.0.0.1:"))
      << cluster.log.text();
  // The key holder was never disturbed.
  EXPECT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
}

TEST_F(CurveClusterTest, KeyedClientOfAPlaintextClusterIsToldSo) {
  Cluster cluster(std::nullopt);
  auto client = cluster.client(generateClusterKeys().value());
  auto refused = client->listCluster();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().toString();
  // Usually "runs without a cluster key"; "...or none" when the server hung
  // up first on every attempt.
  EXPECT_NE(refused.status().message().find("refused by authentication"), std::string::npos)
      << refused.status().toString();
}

TEST_F(CurveClusterTest, WorkerWithTheWrongKeyCannotRegister) {
  ClusterKeys keys = generateClusterKeys().value();
  Cluster cluster(keys);
  auto holder = cluster.client(keys);
  ASSERT_TRUE(waitUntil([&] { return holder->listCluster().value().size() == 1; }, 10s));
  // Another process, in effect: its own context, authenticator and key.
  zmq::context_t otherZmq(1);
  ClusterKeys wrong = generateClusterKeys().value();
  auto otherAuth = ZapAuthenticator::start(otherZmq, wrong, {}, makeNullLogger("a")).value();
  SessionTypeRegistry types;
  types.add<NoopSession>("noop");
  auto intruder = cluster.startWorker(otherZmq, ServerSecurity{wrong, otherAuth.get()}, types);
  std::thread intruderThread([&] { intruder->run(); });
  EXPECT_TRUE(waitUntil([&] { return cluster.log.contains("coordinator connection"); }, 5s));
  EXPECT_TRUE(cluster.log.contains("is not this cluster's"));
  std::this_thread::sleep_for(300ms);  // several heartbeats: it would have registered by now
  EXPECT_EQ(holder->listCluster().value().size(), 1u);
  intruder->stop();
  intruderThread.join();
}

TEST_F(CurveClusterTest, AuthorizedExtraKeysGetInAndUnknownOnesAreLoggedWithTheirAddress) {
  ClusterKeys keys = generateClusterKeys().value();
  ClusterKeys laptop = generateClusterKeys().value();
  ClusterKeys unknown = generateClusterKeys().value();
  Cluster cluster(keys, {laptop.publicKey});
  // A raw peer that knows the server key and presents its own client key.
  auto answered = [&](const ClusterKeys& own) {
    zmq::context_t zmq(1);
    zmq::socket_t socket(zmq, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 1500);
    socket.set(zmq::sockopt::curve_serverkey, keys.publicKey);
    socket.set(zmq::sockopt::curve_publickey, own.publicKey);
    socket.set(zmq::sockopt::curve_secretkey, own.secretKey);
    socket.connect(cluster.coordinator->endpoint());
    (void)socket.send(zmq::str_buffer("not an envelope"), zmq::send_flags::dontwait);
    zmq::message_t reply;  // the server answers garbage with an error frame
    return socket.recv(reply).has_value();
  };
  EXPECT_TRUE(answered(laptop));
  EXPECT_FALSE(answered(unknown));
  EXPECT_TRUE(waitUntil([&] { return cluster.log.contains(unknown.publicKey); }, 5s));
  EXPECT_TRUE(cluster.log.contains("coordinator connection from 127.0.0.1"));
}

// An extra client key may ask for compile work, never become a worker that
// clients' programs are sent to: only the cluster key registers.
TEST_F(CurveClusterTest, AnAuthorizedClientKeyCannotRegisterAWorker) {
  ClusterKeys keys = generateClusterKeys().value();
  ClusterKeys laptop = generateClusterKeys().value();
  Cluster cluster(keys, {laptop.publicKey});
  zmq::socket_t socket(cluster.zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 5000);
  applyCurveClient(socket, laptop);
  socket.set(zmq::sockopt::curve_serverkey, keys.publicKey);
  socket.connect(cluster.coordinator->endpoint());
  auto call = [&](const std::function<void(wire::Request::Builder)>& fill) -> Status {
    capnp::MallocMessageBuilder builder;
    fill(initEnvelope(builder, 1).initRequest());
    (void)socket.send(encodeFrame(builder), zmq::send_flags::none);
    zmq::message_t reply;
    if (!socket.recv(reply)) return timeoutError("no answer");
    auto message = InboundMessage::decode(reply, FrameLimits{}).value();
    auto answer = message.envelope().getReply();
    return answer.isError() ? fromWire(answer.getError()) : okStatus();
  };
  Status registered = call([](wire::Request::Builder r) {
    auto registration = r.initRegisterWorker();
    registration.setEndpoint("tcp://127.0.0.1:9");
    registration.setSlots(4);
    registration.initSessionTypes(1).set(0, "noop");
  });
  EXPECT_EQ(registered.code(), ErrorCode::kPermissionDenied) << registered.toString();
  EXPECT_NE(registered.message().find("--authorized-keys"), std::string::npos);
  // It is still a client: it may look at the cluster, which lists one worker.
  EXPECT_TRUE(call([](wire::Request::Builder r) { r.initListCluster(); }).ok());
  auto holder = cluster.client(keys);
  ASSERT_TRUE(waitUntil([&] { return holder->listCluster().value().size() == 1; }, 5s));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(holder->listCluster().value().size(), 1u);
}

// Starts a noop session through the relay and steps it, asking for the
// benchmark URI back: the canary crosses the wire in both directions.
std::string capturedTraffic(std::optional<ClusterKeys> keys) {
  Cluster cluster(keys);
  RecordingRelay relay(portOf(cluster.worker->endpoint()));
  auto client = cluster.client(keys);
  EXPECT_TRUE(waitUntil(
      [&] {
        auto workers = client->listCluster();
        return workers.ok() && workers->size() == 1;
      },
      10s));
  client::SessionOptions options{"noop", kCanary};
  auto session = client->startSessionOn(relay.endpoint(), options);
  EXPECT_TRUE(session.ok()) << session.status().toString();
  if (!session.ok()) return {};
  auto stepped = (*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Benchmark"});
  EXPECT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(stepped->observations[0].as<std::string>(), kCanary);
  session->reset();
  return relay.captured();
}

// A direct TCP channel would carry requests unencrypted: a keyed worker
// offers none, and a keyed client asks for none; its steps stay on CURVE.
TEST_F(CurveClusterTest, AKeyedClusterHasNoDirectChannelAcrossHosts) {
  auto keys = generateClusterKeys().value();
  Cluster cluster(keys);
  auto client = cluster.client(keys, /*forceTcp=*/false);
  ASSERT_TRUE(waitUntil(
      [&] {
        auto workers = client->listCluster();
        return workers.ok() && workers->size() == 1;
      },
      10s));
  auto session = client->startSession({"noop", "benchmark://curve/direct"});
  ASSERT_TRUE(session.ok()) << session.status().toString();
  ASSERT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
  EXPECT_FALSE(client->usesDirectChannel((*session)->endpoint()));
}

TEST_F(CurveClusterTest, TrafficIsPlaintextWithoutAKeyAndEncryptedWithOne) {
  std::string plain = capturedTraffic(std::nullopt);
  EXPECT_NE(plain.find("PLAINTEXT-CANARY-7f3a"), std::string::npos)
      << "the relay saw " << plain.size() << " bytes but not the canary";
  std::string secret = capturedTraffic(generateClusterKeys().value());
  EXPECT_GT(secret.size(), 200u);  // the session did cross the relay
  EXPECT_EQ(secret.find("PLAINTEXT-CANARY-7f3a"), std::string::npos);
  EXPECT_EQ(secret.find("canary"), std::string::npos);
}

// A server that answered us once dies, and another process takes its port
// (here one that requires a key; in a soak, any process reusing a freed
// ephemeral port). Its handshake failure means "our server is gone", not
// "we lack the key": requests fail as disconnected, which a session answers
// by restoring itself elsewhere, not as permission denied.
TEST_F(CurveClusterTest, AServerWhosePortWasTakenByAnotherIsLostNotRefusing) {
  zmq::context_t zmq(1);
  auto server = std::make_unique<zmq::socket_t>(zmq, zmq::socket_type::router);
  server->set(zmq::sockopt::linger, 0);
  server->bind("tcp://127.0.0.1:0");
  const std::string endpoint = server->get(zmq::sockopt::last_endpoint);
  client::RequestIdentity identity;
  client::ZmqChannel channel(zmq, endpoint, identity, FrameLimits{});
  auto ask = [&channel](Duration timeout) {
    capnp::MallocMessageBuilder builder(64);
    channel.begin(builder, timeout).initRequest().initListCluster();
    return channel.call(builder, timeout);
  };
  std::thread answer([&] {
    // One reply, so the channel has met its server.
    zmq::message_t routing, frame;
    if (!server->recv(routing) || !server->recv(frame)) return;
    auto request = InboundMessage::decode(frame, FrameLimits{});
    if (!request.ok()) return;
    capnp::MallocMessageBuilder builder(64);
    initEnvelope(builder, request->envelope().getRequestId()).initReply().initClusterView();
    server->send(routing, zmq::send_flags::sndmore);
    server->send(encodeFrame(builder), zmq::send_flags::none);
  });
  auto first = ask(5s);
  answer.join();
  ASSERT_TRUE(first.ok()) << first.status().toString();

  server.reset();  // the server dies; a stranger binds its port
  zmq::socket_t stranger(zmq, zmq::socket_type::router);
  stranger.set(zmq::sockopt::linger, 0);
  applyCurveServer(stranger, generateClusterKeys().value(), "stranger");
  // ZeroMQ closes the old listener on its own thread: retry for a while.
  bool bound = false;
  for (int attempt = 0; attempt < 100 && !bound; ++attempt) {
    try {
      stranger.bind(endpoint);
      bound = true;
    } catch (const zmq::error_t&) {
      std::this_thread::sleep_for(20ms);
    }
  }
  ASSERT_TRUE(bound) << "the dead server's port stayed busy";
  // Let the channel reconnect and fail a few handshakes with the stranger.
  std::this_thread::sleep_for(1s);
  (void)channel.peerLost();
  auto second = ask(5s);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kDisconnected) << second.status().toString();
}

}  // namespace
}  // namespace kiln
