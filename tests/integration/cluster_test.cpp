// A whole cluster over real loopback TCP: sessions end to end, hostile and
// broken peers, a client that vanishes, and a worker process killed with
// SIGKILL. Everyone else keeps being served throughout.
#include <gtest/gtest.h>

#include <signal.h>

#include <set>
#include <thread>

#include "common/base/wire_convert.h"
#include "tests/integration/two_workers.h"
#include "tests/support/child_cluster.h"
#include "tests/support/test_identity.h"
#include "tests/support/wait.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

LocalClusterOptions fastOptions(unsigned workers = 1) {
  LocalClusterOptions options;
  options.workers = workers;
  options.log.level = spdlog::level::off;
  options.coordinator.heartbeatInterval = 100ms;
  options.worker.link.heartbeatInterval = 100ms;
  options.worker.limits.leaseTimeout = 500ms;
  options.worker.frames.maxMessageBytes = 64 * 1024;
  return options;
}

std::unique_ptr<client::Client> connect(const std::string& coordinator) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 2s;
  options.leasePeriod = 100ms;
  return std::move(client::Client::connect(options).value());
}

// A raw peer that sends whatever bytes it is told to, for hostile input.
struct RawPeer {
  explicit RawPeer(const std::string& endpoint) : socket(zmq, zmq::socket_type::dealer) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 2000);
    socket.connect(endpoint);
  }
  std::optional<Status> exchange(zmq::message_t frame) {
    socket.send(frame, zmq::send_flags::none);
    zmq::message_t reply;
    if (!socket.recv(reply)) return std::nullopt;
    auto message = InboundMessage::decode(reply, FrameLimits{});
    if (!message.ok()) return message.status();
    auto envelope = message->envelope();
    lastRequestId = envelope.getRequestId();
    if (envelope.getReply().isError()) return fromWire(envelope.getReply().getError());
    return okStatus();
  }
  zmq::context_t zmq{1};
  zmq::socket_t socket;
  std::uint64_t lastRequestId = 0;  // of the last reply
};

std::uint32_t liveSessions(client::Client& client) {
  auto workers = client.listCluster();
  std::uint32_t total = 0;
  for (const auto& w : *workers) total += w.liveSessions;
  return total;
}

TEST(ClusterTest, SessionsEndToEndThroughCoordinatorAndWorkers) {
  auto cluster = LocalCluster::start(fastOptions(2)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto workers = client->listCluster().value();
  ASSERT_EQ(workers.size(), 2u);
  client::SessionOptions options{"noop", "benchmark://t/1"};
  options.observations = {"Sum", "Benchmark"};
  auto a = client->startSession(options).value();
  client::SessionOptions other = options;
  other.benchmark = "benchmark://t/2";  // another benchmark: no warm worker to prefer
  auto b = client->startSession(other).value();
  EXPECT_NE(a->endpoint(), b->endpoint());  // spread over the least loaded workers
  EXPECT_EQ(a->initialObservations()[1].as<std::string>(), "benchmark://t/1");
  auto result = a->step({Value(std::int64_t{3}), Value(std::int64_t{4})},
                        std::vector<std::string>{"Sum", "Tensor"});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->observations[0].as<std::int64_t>(), 7);
  EXPECT_EQ(result->observations[1].as<Int64Tensor>().shape, std::vector<std::int64_t>{4});
  auto fork = a->fork().value();
  EXPECT_EQ(fork->step({}, std::vector<std::string>{"Sum"})->observations[0].as<std::int64_t>(), 7);
  EXPECT_EQ(a->history().steps.size(), 1u);
  EXPECT_EQ(*a->setParameter("noop.sum", ""), "7");
  // A mistyped key is the caller's mistake, not a lost session: no replay
  // under a new id that would leave this one orphaned (issue 48).
  const SessionId before = a->id();
  auto bogus = a->setParameter("bogus", "");
  EXPECT_EQ(bogus.status().code(), ErrorCode::kInvalidArgument) << bogus.status().toString();
  EXPECT_NE(bogus.status().message().find("'bogus'"), std::string::npos);
  EXPECT_EQ(a->id(), before);
  EXPECT_EQ(a->restores(), 0u);
  EXPECT_EQ(*a->setParameter("noop.sum", ""), "7");
  EXPECT_EQ(*client->workerParameter(a->endpoint(), "service.benchmark_cache.get_size", ""), "0");
  EXPECT_TRUE(a->end().ok());
  EXPECT_EQ(a->step({}, std::vector<std::string>{"Sum"}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(client->startSession({"gcc", "x"}).status().code(), ErrorCode::kNotFound);
}

// Issue 48: a benchmark over the worker's --max-message-bytes on the direct
// channel was answered "overloaded: retry later"; now invalid argument, with
// the size, the limit and the flag, and the channel and session stay.
TEST(ClusterTest, ABenchmarkOverTheMessageLimitIsInvalidOnTheDirectChannel) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto small = client->startSession({"noop", "benchmark://t/small"});
  ASSERT_TRUE(small.ok()) << small.status().toString();
  ASSERT_TRUE((*small)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
  ASSERT_TRUE(client->usesDirectChannel((*small)->endpoint()));
  client::SessionOptions big{"noop", "benchmark://t/big"};
  big.program = std::string(100 * 1024, 'x');  // fastOptions: 64 KiB
  auto refused = client->startSession(big);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("--max-message-bytes"), std::string::npos)
      << refused.status().toString();
  EXPECT_NE(refused.status().message().find("limit of 65536 bytes"), std::string::npos);
  auto after = (*small)->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(after.ok()) << after.status().toString();
  EXPECT_EQ(after->observations[0].as<std::int64_t>(), 3);
  EXPECT_EQ((*small)->restores(), 0u);
}

// Issue 48: over ZeroMQ a frame over twice the worker's --max-message-bytes
// was cut by ZeroMQ, which the client took for a lost worker. The placement
// tells the client the worker's limit, and the client refuses a larger
// request itself, before sending it: invalid argument with the size, the
// limit and the flag, nothing marked lost, nothing restored.
TEST(ClusterTest, ARequestOverTheMessageLimitIsInvalidOverZeroMq) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  client::ClientOptions options;
  options.coordinator = cluster->coordinatorEndpoint();
  options.requestTimeout = 2s;
  options.leasePeriod = 100ms;
  options.directSameHost = false;
  options.directAcrossHosts = false;
  auto client = client::Client::connect(options).value();
  auto small = client->startSession({"noop", "benchmark://t/small"});
  ASSERT_TRUE(small.ok()) << small.status().toString();
  ASSERT_TRUE((*small)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
  ASSERT_FALSE(client->usesDirectChannel((*small)->endpoint()));
  auto expectRefused = [](const Status& status, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.toString();
    EXPECT_NE(status.message().find("--max-message-bytes"), std::string::npos) << status.toString();
    EXPECT_NE(status.message().find("limit of 65536 bytes"), std::string::npos)
        << status.toString();
  };
  std::int64_t sum = 1;
  // fastOptions: 64 KiB. Over it, and over twice it (which ZeroMQ would cut).
  for (std::size_t size : {std::size_t{100} << 10, std::size_t{200} << 10, std::size_t{4} << 20}) {
    client::SessionOptions big{"noop", "benchmark://t/big"};
    big.program = std::string(size, 'x');
    auto refused = client->startSession(big);
    ASSERT_FALSE(refused.ok()) << size;
    expectRefused(refused.status(), "a start of " + std::to_string(size) + " bytes");
    // The size it names is the whole request's: the program and its envelope.
    const std::string said = refused.status().message();
    const std::size_t at = said.find("the request is ");
    ASSERT_NE(at, std::string::npos) << said;
    EXPECT_GT(std::stoull(said.substr(at + 15)), size) << said;
    // A step too large is refused the same way; the session keeps its place.
    auto step = (*small)->step({Value(std::string(size, 'x'))}, std::vector<std::string>{"Sum"});
    ASSERT_FALSE(step.ok()) << size;
    expectRefused(step.status(), "a step of " + std::to_string(size) + " bytes");
    auto after = (*small)->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
    ASSERT_TRUE(after.ok()) << after.status().toString();
    sum += 2;
    EXPECT_EQ(after->observations[0].as<std::int64_t>(), sum);
  }
  EXPECT_EQ((*small)->restores(), 0u);
  // The count comes from the worker's load report, a heartbeat behind its
  // sessions: wait for the report of the small one, then none more.
  EXPECT_TRUE(testsupport::waitUntil([&] { return liveSessions(*client) != 0; }, 5s));
  EXPECT_EQ(liveSessions(*client), 1u);
}

TEST(ClusterTest, ManySessionsStartAtOnceSpreadAndEachFailureIsItsOwn) {
  auto cluster = LocalCluster::start(fastOptions(2)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  std::vector<client::SessionOptions> many;
  for (int i = 0; i < 6; ++i) {
    client::SessionOptions options{"noop", fmt::format("benchmark://t/{}", i)};
    options.observations = {"Benchmark"};
    many.push_back(options);
  }
  many.insert(many.begin() + 2, client::SessionOptions{"gcc", "x"});  // no such type
  auto started = client->startSessions(many);
  ASSERT_EQ(started.size(), many.size());
  EXPECT_EQ(started[2].status().code(), ErrorCode::kNotFound);
  std::set<std::string> endpoints;
  for (std::size_t i = 0; i < many.size(); ++i) {
    if (i == 2) continue;
    ASSERT_TRUE(started[i].ok()) << i << ": " << started[i].status().toString();
    // Each in order, with its own benchmark, stepping on its own.
    EXPECT_EQ((*started[i])->initialObservations()[0].as<std::string>(), many[i].benchmark);
    auto stepped = (*started[i])->step({Value(std::int64_t{3})}, std::vector<std::string>{"Sum"});
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 3);
    endpoints.insert((*started[i])->endpoint());
  }
  EXPECT_EQ(endpoints.size(), 2u);  // placed over both workers
}

TEST(ClusterTest, StartsAndStepsInFlightAreAnsweredByOneWait) {
  auto cluster = LocalCluster::start(fastOptions(2)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto stepping = client->startSession({"noop", "benchmark://t/stepping"}).value();
  const std::uint64_t step =
      stepping->sendStep({Value(std::int64_t{5})}, std::vector<std::uint32_t>{0}).value();
  std::vector<client::SessionOptions> many;
  for (int i = 0; i < 4; ++i) {
    client::SessionOptions options{"noop", fmt::format("benchmark://t/{}", i)};
    options.observations = {"Benchmark"};
    many.push_back(options);
  }
  many.push_back({"gcc", "x"});  // no such type: ready at once, with its error
  std::vector<client::PendingStart> starts = client->beginStarts(many);
  ASSERT_EQ(starts.size(), many.size());

  std::vector<client::PendingStep> steps{{stepping.get(), step}};
  std::vector<const client::PendingStart*> waiting;
  for (const auto& start : starts) waiting.push_back(&start);
  std::set<std::size_t> stepsSeen, startsSeen;
  const TimePoint until = std::chrono::steady_clock::now() + 10s;
  while ((stepsSeen.size() < 1 || startsSeen.size() < starts.size()) &&
         std::chrono::steady_clock::now() < until) {
    client::ReadyReplies ready = client->readyReplies(steps, waiting, until);
    stepsSeen.insert(ready.steps.begin(), ready.steps.end());
    startsSeen.insert(ready.starts.begin(), ready.starts.end());
  }
  ASSERT_EQ(stepsSeen.size(), 1u);
  ASSERT_EQ(startsSeen.size(), starts.size());
  EXPECT_EQ(stepping->awaitStep(step)->observations[0].as<std::int64_t>(), 5);
  for (std::size_t i = 0; i + 1 < starts.size(); ++i) {
    auto session = client->finishStart(starts[i]);
    ASSERT_TRUE(session.ok()) << i << ": " << session.status().toString();
    EXPECT_EQ((*session)->initialObservations()[0].as<std::string>(), many[i].benchmark);
  }
  EXPECT_EQ(client->finishStart(starts.back()).status().code(), ErrorCode::kNotFound);
}

TEST(ClusterTest, HostilePeersGetClearErrorsAndOthersKeepStepping) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto client = connect(cluster->coordinatorEndpoint());
  auto session = client->startSession({"noop", "benchmark://t/1"}).value();
  const std::string worker = session->endpoint();

  for (const std::string& endpoint : {worker, cluster->coordinatorEndpoint()}) {
    RawPeer peer(endpoint);
    auto garbage = peer.exchange(zmq::message_t(std::string(40, '\x7f')));
    ASSERT_TRUE(garbage.has_value());
    EXPECT_EQ(garbage->code(), ErrorCode::kInvalidArgument) << garbage->toString();
    auto odd = peer.exchange(zmq::message_t(std::string(13, 'x')));
    EXPECT_NE(odd->message().find("whole number"), std::string::npos);

    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, 1);
    envelope.setProtocolVersion(7);
    envelope.initRequest().initGetVersion();
    auto version = peer.exchange(encodeFrame(builder));
    EXPECT_NE(version->message().find("protocol version 7"), std::string::npos);
  }
  RawPeer peer(worker);
  capnp::MallocMessageBuilder big;
  auto start = initEnvelope(big, 2).initRequest().initStartSession();
  start.setSessionType("noop");
  start.initBenchmark().setProgram(kj::heapArray<kj::byte>(100 * 1024));
  auto oversized = peer.exchange(encodeFrame(big));
  ASSERT_TRUE(oversized.has_value());
  EXPECT_NE(oversized->message().find("exceeds the limit"), std::string::npos);
  // Answered to its request (its first bytes say which), not to request 0,
  // which no client waits for (issue 48).
  EXPECT_EQ(peer.lastRequestId, 2u);

  auto result = session->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->observations[0].as<std::int64_t>(), 1);
}

TEST(ClusterTest, VanishedClientsSessionsAreCleanedUp) {
  auto cluster = LocalCluster::start(fastOptions()).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto observer = connect(cluster->coordinatorEndpoint());
  auto kept = observer->startSession({"noop", "benchmark://t/kept"}).value();
  {
    // A client that starts sessions and goes silent without ending them.
    RawPeer peer(kept->endpoint());
    for (int i = 0; i < 3; ++i) {
      capnp::MallocMessageBuilder builder;
      auto envelope = initEnvelope(builder, i + 1);
      testsupport::setTestClient(envelope, 0xdead);
      auto start = envelope.initRequest().initStartSession();
      start.setSessionType("noop");
      start.initBenchmark().setUri("benchmark://t/orphan");
      ASSERT_TRUE(peer.exchange(encodeFrame(builder))->ok());
    }
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (liveSessions(*observer) != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(liveSessions(*observer), 1u);
  std::this_thread::sleep_for(700ms);  // longer than the lease: the keep-alives hold it
  EXPECT_TRUE(kept->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"}).ok());
}

TEST(ClusterTest, WorkerKilledWithSigkillIsLostAndOthersKeepServing) {
  zmq::context_t zmq(1);
  SteadyClock clock;
  CoordinatorConfig config;  // default heartbeat 1 s, liveness 3
  config.listen = "tcp://127.0.0.1:0";
  auto coordinator =
      CoordinatorServer::create(config, zmq, clock, makeNullLogger("coordinator")).value();
  std::thread coordinatorThread([&] { coordinator->run(); });

  auto client = connect(coordinator->endpoint());
  integration::TwoWorkers two;
  ASSERT_NO_FATAL_FAILURE(
      integration::startTwoWorkers(KILN_BINARY, coordinator->endpoint(), *client, two));

  // Some history to replay: actions, a parameter, and a fingerprint.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(two.onDoomed->step({Value(std::int64_t{i % 7})}, std::vector<std::string>{}).ok());
    if (i == 10) {
      ASSERT_TRUE(two.onDoomed->setParameter("noop.busy_us", "10").ok());
    }
  }
  ASSERT_TRUE(two.onDoomed->history().fingerprint.has_value());
  std::int64_t expected = 0;
  for (int i = 0; i < 20; ++i) expected += i % 7;

  ::kill(two.doomed->process.pid(), SIGKILL);
  auto killedAt = std::chrono::steady_clock::now();
  // The next step notices the dropped connection at once, rebuilds the
  // session on the survivor by replay, checks its fingerprint, and succeeds.
  auto restored = two.onDoomed->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(restored.ok()) << restored.status().toString();
  EXPECT_EQ(restored->observations[0].as<std::int64_t>(), expected + 1);
  EXPECT_EQ(two.onDoomed->endpoint(), two.survivor->endpoint);
  EXPECT_EQ(two.onDoomed->restores(), 1u);
  EXPECT_EQ(client->restoredSessions(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - killedAt, 2s);
  while (client->listCluster()->size() != 1 && std::chrono::steady_clock::now() < killedAt + 6s) {
    std::this_thread::sleep_for(50ms);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killedAt).count();
  ASSERT_EQ(client->listCluster()->size(), 1u);
  EXPECT_LE(seconds, 4.0) << "lost after " << seconds << " s";
  EXPECT_EQ(client->listCluster()->front().endpoint, two.survivor->endpoint);
  EXPECT_TRUE(two.onSurvivor->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
  EXPECT_EQ((*client->startSession({"noop", "x"}))->endpoint(), two.survivor->endpoint);

  coordinator->stop();
  coordinatorThread.join();
}

// Kills the worker under a noop session after `skew` of the survivor's next
// sessions were set to start skewed (as under a compiler that is rarely not
// deterministic, their replays diverge), then steps the session once more.
struct SkewedRestore {
  Result<client::StepResult> step = internalError("not run");
  std::int64_t expectedSum = 0;
  std::size_t restores = 0;
};

SkewedRestore restoreWithSkewedStarts(int skew) {
  SkewedRestore outcome;
  integration::ThreadedCoordinator coordinator;

  auto client = connect(coordinator.endpoint());
  integration::TwoWorkers two;
  integration::startTwoWorkers(KILN_BINARY, coordinator.endpoint(), *client, two);
  if (!two.onDoomed) return outcome;
  // Enough steps for the client to have fetched a fingerprint to check.
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(two.onDoomed->step({Value(std::int64_t{i % 5})}, std::vector<std::string>{}).ok());
    outcome.expectedSum += i % 5;
  }
  EXPECT_TRUE(two.onDoomed->history().fingerprint.has_value());
  auto skewed = client->workerParameter(two.survivor->endpoint, "noop.skew_next_starts",
                                        std::to_string(skew));
  EXPECT_TRUE(skewed.ok()) << skewed.status().toString();

  ::kill(two.doomed->process.pid(), SIGKILL);
  outcome.step = two.onDoomed->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
  outcome.expectedSum += 2;
  outcome.restores = two.onDoomed->restores();
  return outcome;
}

TEST(ClusterTest, AReplayThatDivergesOnceIsTriedAgainAndTheStepSucceeds) {
  SkewedRestore outcome = restoreWithSkewedStarts(1);
  ASSERT_TRUE(outcome.step.ok()) << outcome.step.status().toString();
  EXPECT_EQ(outcome.step->observations[0].as<std::int64_t>(), outcome.expectedSum);
  EXPECT_EQ(outcome.restores, 1u);
}

TEST(ClusterTest, AReplayThatDivergesAgainIsALostSessionThatSaysSo) {
  SkewedRestore outcome = restoreWithSkewedStarts(2);
  ASSERT_FALSE(outcome.step.ok());
  EXPECT_EQ(outcome.step.status().code(), ErrorCode::kDisconnected);
  EXPECT_NE(outcome.step.status().message().find("diverged"), std::string::npos)
      << outcome.step.status().toString();
  EXPECT_EQ(outcome.restores, 0u);
}

}  // namespace
}  // namespace kiln
