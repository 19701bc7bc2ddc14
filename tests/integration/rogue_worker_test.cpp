// Issue 48, item 3, over real loopback sockets on a cluster without a key:
// a client that registers a fake worker with plain requests is refused
// unless it holds the operator's worker token; and a worker that is
// registered (a token holder gone rogue) is placed a victim's sessions but
// receives only the victim's pass for itself, with which it cannot step or
// end the victim's session on the real worker. Before the fix the fake
// worker registered, was placed sessions, received the client's secret and
// stepped and ended the victim's session on the real worker with it.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include <kiln/client/client.h>
#include "common/base/wire_convert.h"
#include "coordinator/coordinator_server.h"
#include "tests/support/wait.h"
#include "worker/noop_session.h"
#include "worker/worker_server.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using testsupport::waitUntil;

// A coordinator that asks for `token`, and one real noop worker that has it.
struct TokenCluster {
  explicit TokenCluster(Secret token) {
    CoordinatorConfig config;
    config.listen = "tcp://127.0.0.1:0";
    config.heartbeatInterval = 100ms;
    config.workerToken = token;
    coordinator = CoordinatorServer::create(config, zmq, clock, makeNullLogger("c")).value();
    coordinatorThread = std::thread([this] { coordinator->run(); });
    types.add<NoopSession>("noop");
    WorkerConfig worker;
    worker.coordinator = coordinator->endpoint();
    worker.link.heartbeatInterval = 100ms;
    worker.registrationToken = token;
    real = WorkerServer::create(worker, types, zmq, clock, makeNullLogger("w")).value();
    realThread = std::thread([this] { real->run(); });
  }
  ~TokenCluster() {
    real->stop();
    realThread.join();
    real.reset();
    coordinator->stop();
    coordinatorThread.join();
    coordinator.reset();
  }
  std::unique_ptr<client::Client> client() const {
    client::ClientOptions options;
    options.coordinator = coordinator->endpoint();
    options.requestTimeout = 10s;
    return client::Client::connect(options).value();
  }

  zmq::context_t zmq{1};
  SteadyClock clock;
  SessionTypeRegistry types;
  std::unique_ptr<CoordinatorServer> coordinator;
  std::thread coordinatorThread;
  std::unique_ptr<WorkerServer> real;
  std::thread realThread;
};

// What a fake worker saw of a client: the identity fields of one request.
struct Captured {
  std::string secret;
  std::uint64_t clientId = 0;
  std::string pass;
};

// A fake worker written with plain ZeroMQ requests, as an attacker would:
// it registers with the coordinator, heartbeats, and answers every session
// request with an error after keeping the identity it carried.
class FakeWorker {
 public:
  explicit FakeWorker(zmq::context_t& zmq, const std::string& coordinator)
      : link_(zmq, zmq::socket_type::dealer), clients_(zmq, zmq::socket_type::router) {
    link_.set(zmq::sockopt::linger, 0);
    link_.set(zmq::sockopt::rcvtimeo, 5000);
    link_.connect(coordinator);
    clients_.set(zmq::sockopt::linger, 0);
    clients_.bind("tcp://127.0.0.1:0");
    endpoint_ = clients_.get(zmq::sockopt::last_endpoint);
  }
  ~FakeWorker() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  const std::string& endpoint() const { return endpoint_; }

  // Registers at `endpoint` (default: its own), presenting `token` if set.
  Status registerAs(const Secret* token, const std::string& endpoint = {}) {
    capnp::MallocMessageBuilder builder;
    auto registration = initEnvelope(builder, 1).initRequest().initRegisterWorker();
    registration.setEndpoint(endpoint.empty() ? endpoint_ : endpoint);
    registration.setSlots(64);  // looks idle: placements come here first
    registration.initSessionTypes(1).set(0, "noop");
    registration.setPassKey(PassKey::draw().wire());
    if (token != nullptr) registration.setToken(wireBytes(*token));
    (void)link_.send(encodeFrame(builder), zmq::send_flags::none);
    zmq::message_t reply;
    if (!link_.recv(reply)) return timeoutError("the coordinator did not answer");
    auto message = InboundMessage::decode(reply, FrameLimits{}).value();
    auto answer = message.envelope().getReply();
    return answer.isError() ? fromWire(answer.getError()) : okStatus();
  }

  // Serves on its own thread from now on.
  void serve() {
    thread_ = std::thread([this] { loop(); });
  }
  std::vector<Captured> captured() {
    std::lock_guard lock(mutex_);
    return captured_;
  }

 private:
  void loop() {
    auto nextBeat = std::chrono::steady_clock::now();
    while (!stop_) {
      zmq::pollitem_t items[] = {{clients_.handle(), 0, ZMQ_POLLIN, 0},
                                 {link_.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, 20ms);
      zmq::message_t drop;
      while (link_.recv(drop, zmq::recv_flags::dontwait)) {
      }
      if (std::chrono::steady_clock::now() >= nextBeat) {
        nextBeat += 50ms;
        capnp::MallocMessageBuilder beat;
        initEnvelope(beat, 0).initHeartbeat().initLoad();
        (void)link_.send(encodeFrame(beat), zmq::send_flags::dontwait);
      }
      zmq::message_t route, frame;
      while (clients_.recv(route, zmq::recv_flags::dontwait)) {
        if (!clients_.recv(frame, zmq::recv_flags::dontwait)) break;
        auto message = InboundMessage::decode(frame, FrameLimits{});
        if (!message.ok()) continue;
        auto envelope = message->envelope();
        {
          std::lock_guard lock(mutex_);
          auto secret = envelope.getClientSecret();
          auto pass = envelope.getClientPass();
          captured_.push_back({std::string(secret.asChars().begin(), secret.size()),
                               envelope.getClientId(),
                               std::string(pass.asChars().begin(), pass.size())});
        }
        (void)clients_.send(route, zmq::send_flags::sndmore);
        (void)clients_.send(
            encodeErrorReply(envelope.getRequestId(), invalidArgument("a fake worker")),
            zmq::send_flags::none);
      }
    }
  }

  zmq::socket_t link_;
  zmq::socket_t clients_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Captured> captured_;
};

// Sends one request to `endpoint` carrying exactly what `as` captured.
Status replay(zmq::context_t& zmq, const std::string& endpoint, const Captured& as,
              const std::function<void(wire::Request::Builder)>& fill) {
  zmq::socket_t socket(zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 5000);
  socket.connect(endpoint);
  capnp::MallocMessageBuilder builder;
  auto envelope = initEnvelope(builder, 9);
  auto bytes = [](const std::string& text) {
    return capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(text.data()), text.size());
  };
  if (!as.secret.empty()) envelope.setClientSecret(bytes(as.secret));
  envelope.setClientId(as.clientId);
  if (!as.pass.empty()) envelope.setClientPass(bytes(as.pass));
  fill(envelope.initRequest());
  (void)socket.send(encodeFrame(builder), zmq::send_flags::none);
  zmq::message_t reply;
  if (!socket.recv(reply)) return timeoutError("no answer");
  auto message = InboundMessage::decode(reply, FrameLimits{}).value();
  auto answer = message.envelope().getReply();
  return answer.isError() ? fromWire(answer.getError()) : okStatus();
}

TEST(RogueWorkerTest, AFakeWorkerWithoutTheOperatorsTokenIsNotRegistered) {
  const Secret token = Secret::draw(), guessed = Secret::draw();
  TokenCluster cluster(token);
  auto victim = cluster.client();
  ASSERT_TRUE(waitUntil([&] { return victim->listCluster().value().size() == 1; }, 5s));
  FakeWorker fake(cluster.zmq, cluster.coordinator->endpoint());
  // Without a token, with a guessed one, and at the real worker's endpoint
  // (which would have replaced it).
  for (const Secret* presented : {static_cast<const Secret*>(nullptr), &guessed}) {
    for (const std::string& endpoint : {fake.endpoint(), cluster.real->endpoint()}) {
      Status refused = fake.registerAs(presented, endpoint);
      EXPECT_EQ(refused.code(), ErrorCode::kPermissionDenied) << refused.toString();
      EXPECT_NE(refused.message().find("--worker-token-file"), std::string::npos)
          << refused.toString();
    }
  }
  fake.serve();
  // Every session goes to the real worker; the fake never hears of one.
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < 6; ++i) {
    auto session = victim->startSession({"noop", "benchmark://rogue/a"});
    ASSERT_TRUE(session.ok()) << session.status().toString();
    EXPECT_EQ((*session)->endpoint(), cluster.real->endpoint());
    ASSERT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
    sessions.push_back(std::move(session).value());
  }
  auto workers = victim->listCluster().value();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].endpoint, cluster.real->endpoint());
  EXPECT_TRUE(fake.captured().empty());
}

TEST(RogueWorkerTest, WhatOneWorkerCapturesIsUselessOnAnother) {
  const Secret token = Secret::draw();
  TokenCluster cluster(token);
  auto victim = cluster.client();
  ASSERT_TRUE(waitUntil([&] { return victim->listCluster().value().size() == 1; }, 5s));
  auto owned = victim->startSessionOn(cluster.real->endpoint(), {"noop", "benchmark://rogue/a"});
  ASSERT_TRUE(owned.ok()) << owned.status().toString();
  ASSERT_TRUE((*owned)->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"}).ok());
  // A holder of the token gone rogue: it registers and is placed sessions.
  FakeWorker fake(cluster.zmq, cluster.coordinator->endpoint());
  ASSERT_TRUE(fake.registerAs(&token).ok());
  fake.serve();
  ASSERT_TRUE(waitUntil([&] { return victim->listCluster().value().size() == 2; }, 5s));
  for (int i = 0; i < 12 && fake.captured().empty(); ++i) {
    (void)victim->startSession({"noop", "benchmark://rogue/b"});
  }
  const std::vector<Captured> captured = fake.captured();
  ASSERT_FALSE(captured.empty()) << "the fake worker was never placed a session";
  const std::uint64_t id = (*owned)->id().value;
  for (const Captured& as : captured) {
    EXPECT_TRUE(as.secret.empty()) << "a worker received the client's secret";
    EXPECT_EQ(as.clientId, victim->id().value);
    Status step = replay(cluster.zmq, cluster.real->endpoint(), as, [&](wire::Request::Builder r) {
      auto request = r.initStep();
      request.setSessionId(id);
      toWire(Value(std::int64_t{7}), request.initActions(1)[0]);
    });
    EXPECT_FALSE(step.ok()) << "the fake worker stepped the victim's session";
    Status end = replay(cluster.zmq, cluster.real->endpoint(), as,
                        [&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); });
    EXPECT_FALSE(end.ok()) << "the fake worker ended the victim's session";
  }
  // The victim's session is untouched: its sum is its own steps alone.
  auto stepped = (*owned)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 3);
  EXPECT_EQ((*owned)->restores(), 0u);
}

}  // namespace
}  // namespace kiln
