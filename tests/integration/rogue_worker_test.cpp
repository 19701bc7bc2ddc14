// Issue 48, item 3, over real loopback sockets on a cluster without a key:
// a client that registers a fake worker with plain requests is refused
// unless it holds the operator's worker token; and a worker that is
// registered (a token holder gone rogue) is placed a victim's sessions but
// receives only the victim's pass for itself, with which it cannot step or
// end the victim's session on the real worker. Before the fix the fake
// worker registered, was placed sessions, received the client's secret and
// stepped and ended the victim's session on the real worker with it.
// The same holds for a nesting host gone rogue and an experiment's client:
// the host is sent the experiment's pass for itself, which opens neither the
// experiment's workers on another host nor the experiment at the
// coordinator. Before the fix every host was sent the experiment's key.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include <kiln/client/client.h>
#include "common/base/wire_convert.h"
#include "common/types/underlying_wire.h"
#include "tests/support/loopback_cluster.h"
#include "tests/support/wait.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using testsupport::waitUntil;

// The shared loopback cluster: a coordinator that asks for `token`, and one
// real noop worker that has it.
struct TokenCluster : testsupport::LoopbackCluster {
  explicit TokenCluster(const Secret& token)
      : LoopbackCluster(testsupport::LoopbackClusterOptions{.workerToken = token}) {}
  std::unique_ptr<client::Client> client() const {
    return LoopbackCluster::client(std::nullopt, /*forceTcp=*/false);
  }
};

// What a fake worker saw of a client: the identity fields of one request.
struct Captured {
  std::string secret;
  std::uint64_t clientId = 0;
  std::string pass;
  std::string experiment;      // the experiment it acted for, if any
  std::string experimentKey;   // what proved it: the key (before issue 48's fix)
  std::string experimentPass;  // or the experiment's pass for this host
};

std::string bytesOf(capnp::Data::Reader data) {
  return std::string(data.asChars().begin(), data.size());
}

// A fake worker written with plain ZeroMQ requests, as an attacker would:
// it registers with the coordinator, heartbeats, and answers every session
// request with an error after keeping the identity it carried. Registered as
// a nesting host, it also creates the underlying workers the coordinator
// asks for and reports them, so that experiments place their work there.
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
  Status registerAs(const Secret* token, const std::string& endpoint = {}, bool nesting = false) {
    capnp::MallocMessageBuilder builder;
    auto registration = initEnvelope(builder, 1).initRequest().initRegisterWorker();
    registration.setEndpoint(endpoint.empty() ? endpoint_ : endpoint);
    registration.setSlots(64);  // looks idle: placements come here first
    registration.initSessionTypes(1).set(0, "noop");
    registration.setPassKey(PassKey::draw().wire());
    registration.setNesting(nesting);
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
      zmq::message_t order;
      while (link_.recv(order, zmq::recv_flags::dontwait)) createIfAsked(order);
      if (std::chrono::steady_clock::now() >= nextBeat) {
        nextBeat += 50ms;
        capnp::MallocMessageBuilder beat;
        auto heartbeat = initEnvelope(beat, 0).initHeartbeat();
        heartbeat.initLoad();
        auto list = heartbeat.initUnderlying(created_.size());
        for (unsigned i = 0; i < created_.size(); ++i) toWire(created_[i], list[i]);
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
          captured_.push_back({bytesOf(secret), envelope.getClientId(), bytesOf(pass),
                               envelope.getExperiment().cStr(),
                               bytesOf(envelope.getExperimentKey()),
                               bytesOf(envelope.getExperimentPass())});
        }
        (void)clients_.send(route, zmq::send_flags::sndmore);
        (void)clients_.send(
            encodeErrorReply(envelope.getRequestId(), invalidArgument("a fake worker")),
            zmq::send_flags::none);
      }
    }
  }

  // Answers the coordinator's createWorker as a nesting host would, keeping
  // the spec (and the experiment's pass in it) to report in heartbeats.
  void createIfAsked(zmq::message_t& frame) {
    auto message = InboundMessage::decode(frame, FrameLimits{});
    if (!message.ok()) return;
    auto envelope = message->envelope();
    if (!envelope.isRequest() || !envelope.getRequest().isCreateWorker()) return;
    UnderlyingSpec spec = fromWire(envelope.getRequest().getCreateWorker().getSpec());
    if (spec.workerId == 0) spec.workerId = 0xfa4e + created_.size();
    // The coordinator repeats a create until a heartbeat lists the worker.
    if (std::none_of(created_.begin(), created_.end(),
                     [&](const auto& known) { return known.spec.workerId == spec.workerId; })) {
      created_.push_back({spec, {}});
    }
    capnp::MallocMessageBuilder builder(64);
    initEnvelope(builder, envelope.getRequestId())
        .initReply()
        .initWorkerCreated()
        .setWorkerId(spec.workerId);
    (void)link_.send(encodeFrame(builder), zmq::send_flags::dontwait);
  }

  zmq::socket_t link_;
  zmq::socket_t clients_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Captured> captured_;
  std::vector<UnderlyingStatus> created_;  // the serving thread's own
};

capnp::Data::Reader asData(const std::string& text) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(text.data()), text.size());
}

// Sends the request in `builder` to `endpoint`; its reply, or the error it was.
Result<InboundMessage> exchange(zmq::context_t& zmq, const std::string& endpoint,
                                capnp::MessageBuilder& builder) {
  zmq::socket_t socket(zmq, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 5000);
  socket.connect(endpoint);
  (void)socket.send(encodeFrame(builder), zmq::send_flags::none);
  zmq::message_t reply;
  if (!socket.recv(reply)) return timeoutError("no answer");
  KILN_ASSIGN_OR_RETURN(InboundMessage message, InboundMessage::decode(reply, FrameLimits{}));
  auto answer = message.envelope().getReply();
  if (answer.isError()) return fromWire(answer.getError());
  return message;
}

// Sends one request to `endpoint` carrying exactly what `as` captured.
Status replay(zmq::context_t& zmq, const std::string& endpoint, const Captured& as,
              const std::function<void(wire::Request::Builder)>& fill) {
  capnp::MallocMessageBuilder builder;
  auto envelope = initEnvelope(builder, 9);
  if (!as.secret.empty()) envelope.setClientSecret(asData(as.secret));
  envelope.setClientId(as.clientId);
  if (!as.pass.empty()) envelope.setClientPass(asData(as.pass));
  fill(envelope.initRequest());
  return exchange(zmq, endpoint, builder).status();
}

// Sends one request to `endpoint` for its worker `target` (0: the server
// itself) acting for the experiment with the proof `as` captured, and as a
// client by `own` secret (a rogue host may be a client too): what is tried
// is the experiment's proof alone.
Result<InboundMessage> replayForExperiment(
    zmq::context_t& zmq, const std::string& endpoint, const Captured& as, const Secret& own,
    std::uint64_t target, const std::function<void(wire::Request::Builder)>& fill) {
  capnp::MallocMessageBuilder builder;
  auto envelope = initEnvelope(builder, 9);
  envelope.setClientSecret(wireBytes(own));
  envelope.setTarget(target);
  envelope.setExperiment(as.experiment);
  if (!as.experimentKey.empty()) envelope.setExperimentKey(asData(as.experimentKey));
  if (!as.experimentPass.empty()) envelope.setExperimentPass(asData(as.experimentPass));
  fill(envelope.initRequest());
  return exchange(zmq, endpoint, builder);
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
    for (const std::string& endpoint : {fake.endpoint(), cluster.worker->endpoint()}) {
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
    EXPECT_EQ((*session)->endpoint(), cluster.worker->endpoint());
    ASSERT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
    sessions.push_back(std::move(session).value());
  }
  auto workers = victim->listCluster().value();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].endpoint, cluster.worker->endpoint());
  EXPECT_TRUE(fake.captured().empty());
}

TEST(RogueWorkerTest, WhatOneWorkerCapturesIsUselessOnAnother) {
  const Secret token = Secret::draw();
  TokenCluster cluster(token);
  auto victim = cluster.client();
  ASSERT_TRUE(waitUntil([&] { return victim->listCluster().value().size() == 1; }, 5s));
  auto owned = victim->startSessionOn(cluster.worker->endpoint(), {"noop", "benchmark://rogue/a"});
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
    Status step =
        replay(cluster.zmq, cluster.worker->endpoint(), as, [&](wire::Request::Builder r) {
          auto request = r.initStep();
          request.setSessionId(id);
          toWire(Value(std::int64_t{7}), request.initActions(1)[0]);
        });
    EXPECT_FALSE(step.ok()) << "the fake worker stepped the victim's session";
    Status end = replay(cluster.zmq, cluster.worker->endpoint(), as,
                        [&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); });
    EXPECT_FALSE(end.ok()) << "the fake worker ended the victim's session";
  }
  // The victim's session is untouched: its sum is its own steps alone.
  auto stepped = (*owned)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 3);
  EXPECT_EQ((*owned)->restores(), 0u);
}

// Issue 48: an experiment's client sent every nesting host of the
// experiment its key. A registered host gone rogue (a holder of the worker
// token) that is given one of the experiment's workers captures what the
// experiment's client sends it; with that, it reaches neither the
// experiment's worker on the real host nor the experiment at the
// coordinator. Before the fix it listed and started sessions on the real
// host's worker and closed the experiment with the key it captured.
TEST(RogueWorkerTest, WhatOneNestingHostCapturesOfAnExperimentIsUselessElsewhere) {
  const Secret token = Secret::draw();
  LocalClusterOptions options;
  options.workers = 0;
  options.nestingHosts = 1;
  options.coordinator.workerToken = token;
  options.coordinator.heartbeatInterval = 100ms;
  options.worker.link.heartbeatInterval = 100ms;
  options.log.level = spdlog::level::off;
  auto cluster = LocalCluster::start(options).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  const std::string realHost = cluster->workerEndpoints().at(0);
  zmq::context_t zmq(1);
  FakeWorker fake(zmq, cluster->coordinatorEndpoint());
  ASSERT_TRUE(fake.registerAs(&token, {}, /*nesting=*/true).ok());
  fake.serve();

  client::ClientOptions clientOptions;
  clientOptions.coordinator = cluster->coordinatorEndpoint();
  clientOptions.requestTimeout = 10s;
  auto owner = client::Client::connect(clientOptions).value();
  ASSERT_TRUE(waitUntil([&] { return owner->listCluster().value().size() == 2; }, 5s));
  ExperimentSpec spec;
  spec.name = "alpha";
  spec.workers = 2;  // spread: one on each host
  auto opened = owner->openExperiment(spec);
  ASSERT_TRUE(opened.ok()) << opened.status().toString();
  auto ready = owner->waitForExperiment("alpha", 2, 10s);
  ASSERT_TRUE(ready.ok()) << ready.status().toString();
  std::uint64_t realWorker = 0;
  for (const auto& worker : ready->workers) {
    if (worker.endpoint == realHost) realWorker = worker.workerId;
  }
  ASSERT_NE(realWorker, 0u) << "the experiment has no worker on the real host";

  // The experiment's client works until the rogue host has seen its requests.
  clientOptions.experiment = "alpha";
  clientOptions.experimentKey = opened->key;
  auto member = client::Client::connect(clientOptions).value();
  auto fromExperiment = [&] {
    std::vector<Captured> mine;
    for (const Captured& as : fake.captured()) {
      if (as.experiment == "alpha") mine.push_back(as);
    }
    return mine;
  };
  for (int i = 0; i < 12 && fromExperiment().empty(); ++i) {
    (void)member->startSession({"noop", "benchmark://rogue/c"});
  }
  const std::vector<Captured> captured = fromExperiment();
  ASSERT_FALSE(captured.empty()) << "the rogue host never saw the experiment's requests";

  const Secret own = Secret::draw();
  for (const Captured& as : captured) {
    EXPECT_TRUE(as.experimentKey.empty()) << "a host received the experiment's key";
    // The real host shows the experiment's worker to none of it...
    auto listed = replayForExperiment(zmq, realHost, as, own, 0,
                                      [](wire::Request::Builder r) { r.initListUnderlying(); });
    ASSERT_TRUE(listed.ok()) << listed.status().toString();
    EXPECT_EQ(listed->envelope().getReply().getUnderlyingView().getWorkers().size(), 0u)
        << "the rogue host saw the experiment's worker on another host";
    auto started =
        replayForExperiment(zmq, realHost, as, own, realWorker, [](wire::Request::Builder r) {
          auto start = r.initStartSession();
          start.setSessionType("noop");
          start.initBenchmark().setUri("benchmark://rogue/d");
        });
    EXPECT_EQ(started.status().code(), ErrorCode::kNotFound)
        << "the rogue host used the experiment's worker on another host";
    // ...and the coordinator does not let it act for the experiment.
    for (bool close : {false, true}) {
      auto acted = replayForExperiment(zmq, cluster->coordinatorEndpoint(), as, own, 0,
                                       [&](wire::Request::Builder r) {
                                         if (close) {
                                           r.initCloseExperiment().setName("alpha");
                                         } else {
                                           r.initGetExperiment().setName("alpha");
                                         }
                                       });
      EXPECT_EQ(acted.status().code(), ErrorCode::kPermissionDenied)
          << "the rogue host acted for the experiment at the coordinator";
    }
  }
  // The experiment is still open, and its worker on the real host its own.
  auto status = member->experimentStatus("alpha");
  ASSERT_TRUE(status.ok()) << status.status().toString();
  EXPECT_EQ(status->readyWorkers(), 2u);
}

}  // namespace
}  // namespace kiln
