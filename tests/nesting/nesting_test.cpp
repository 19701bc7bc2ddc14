// Nesting hosts end to end over loopback: underlying workers created,
// called and released by id, experiments placed by the coordinator,
// isolation between experiments, an experiment whose client vanishes while
// another keeps stepping, the benchmark cache shared across experiments,
// and the work pool's scheduling and cancellation.
#include <gtest/gtest.h>

#include <thread>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "client/work_pool.h"
#include "common/wire_convert.h"
#include "local/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

LocalClusterOptions nestingOptions(unsigned hosts, unsigned slots = 2) {
  LocalClusterOptions options;
  options.workers = 0;
  options.nestingHosts = hosts;
  options.worker.slots = slots;
  options.log.level = spdlog::level::off;
  options.coordinator.heartbeatInterval = 100ms;
  options.coordinator.experimentLease = 1s;
  options.worker.link.heartbeatInterval = 100ms;
  options.worker.limits.leaseTimeout = 1s;
  return options;
}

std::unique_ptr<client::Client> connect(const std::string& coordinator,
                                        const std::string& experiment = {}) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.experiment = experiment;
  options.requestTimeout = 5s;
  options.leasePeriod = 100ms;
  return std::move(client::Client::connect(options).value());
}

ExperimentSpec experiment(const std::string& name, std::uint32_t workers) {
  ExperimentSpec spec;
  spec.name = name;
  spec.workers = workers;
  return spec;
}

// Speaks to a nesting host directly, as the coordinator or a tool would.
struct HostPeer {
  HostPeer(const std::string& endpoint, std::string experimentName)
      : socket(zmq, zmq::socket_type::dealer), experiment(std::move(experimentName)) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 5000);
    socket.connect(endpoint);
  }
  // Builds a request with `fill`, sends it to `target`, returns the reply.
  template <class Fill>
  Result<InboundMessage> call(std::uint64_t target, Fill fill) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, ++requestId);
    envelope.setClientId(clientId);
    envelope.setExperiment(experiment);
    envelope.setTarget(target);
    fill(envelope.initRequest());
    socket.send(encodeFrame(builder), zmq::send_flags::none);
    zmq::message_t reply;
    if (!socket.recv(reply)) return timeoutError("no reply");
    auto message = InboundMessage::decode(reply, FrameLimits{});
    if (!message.ok()) return message.status();
    if (message->envelope().getReply().isError()) {
      return fromWire(message->envelope().getReply().getError());
    }
    return message;
  }
  Result<std::uint64_t> create(const std::string& owner) {
    KILN_ASSIGN_OR_RETURN(auto reply, call(0, [&](wire::Request::Builder r) {
                            r.initCreateWorker().initSpec().setExperiment(owner);
                          }));
    return reply.envelope().getReply().getWorkerCreated().getWorkerId();
  }
  Result<std::uint64_t> start(std::uint64_t target) {
    KILN_ASSIGN_OR_RETURN(auto reply, call(target, [](wire::Request::Builder r) {
                            auto start = r.initStartSession();
                            start.setSessionType("noop");
                            start.initBenchmark().setUri("benchmark://noop/x");
                          }));
    return reply.envelope().getReply().getSessionStarted().getSessionId();
  }
  Status step(std::uint64_t target, std::uint64_t session) {
    return call(target,
                [&](wire::Request::Builder r) {
                  auto step = r.initStep();
                  step.setSessionId(session);
                  toWire(Value(std::int64_t{1}), step.initActions(1)[0]);
                })
        .status();
  }

  zmq::context_t zmq{1};
  zmq::socket_t socket;
  std::string experiment;
  std::uint64_t clientId = 77;
  std::uint64_t requestId = 0;
};

TEST(Nesting, CreateCallReleaseByIdLeavesNothingBehind) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  HostPeer peer(cluster->workerEndpoints()[0], "alpha");
  auto worker = peer.create("alpha");
  ASSERT_TRUE(worker.ok()) << worker.status().toString();
  auto first = peer.start(*worker);
  auto second = peer.start(*worker);
  ASSERT_TRUE(first.ok()) << first.status().toString();
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(peer.step(*worker, *first).ok());

  // Release with live sessions ends them cleanly and says how many.
  auto released =
      peer.call(0, [&](wire::Request::Builder r) { r.initReleaseWorker().setWorkerId(*worker); });
  ASSERT_TRUE(released.ok()) << released.status().toString();
  EXPECT_EQ(released->envelope().getReply().getWorkerReleased().getSessionsEnded(), 2u);

  // The id is gone, with a clear error, and the host lists nothing.
  Status after = peer.step(*worker, *first);
  EXPECT_EQ(after.code(), ErrorCode::kNotFound);
  EXPECT_NE(after.message().find("no underlying worker"), std::string::npos) << after.toString();
  auto list = peer.call(0, [](wire::Request::Builder r) { r.initListUnderlying(); });
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->envelope().getReply().getUnderlyingView().getWorkers().size(), 0u);
}

TEST(Nesting, UnknownIdsAndMisaddressedRequestsGetClearErrors) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  HostPeer peer(cluster->workerEndpoints()[0], "alpha");
  EXPECT_EQ(peer.start(12345).status().code(), ErrorCode::kNotFound);
  // Sessions are hosted by underlying workers, never by the host itself.
  EXPECT_EQ(peer.start(0).status().code(), ErrorCode::kInvalidArgument);
  // An experiment cannot create workers for another one.
  EXPECT_EQ(peer.create("beta").status().code(), ErrorCode::kPermissionDenied);
  // Releasing twice: the second is not found.
  auto worker = peer.create("alpha").value();
  auto release = [&] {
    return peer
        .call(0, [&](wire::Request::Builder r) { r.initReleaseWorker().setWorkerId(worker); })
        .status();
  };
  EXPECT_TRUE(release().ok());
  EXPECT_EQ(release().code(), ErrorCode::kNotFound);
  // Unknown session types in a worker spec are refused up front.
  auto bad = peer.call(0, [](wire::Request::Builder r) {
    auto spec = r.initCreateWorker().initSpec();
    spec.setExperiment("alpha");
    spec.initSessionTypes(1).set(0, "no-such-type");
  });
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Nesting, ExperimentsAreIsolated) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  HostPeer alpha(cluster->workerEndpoints()[0], "alpha");
  HostPeer beta(cluster->workerEndpoints()[0], "beta");
  auto alphaWorker = alpha.create("alpha").value();
  auto session = alpha.start(alphaWorker).value();
  // beta can neither step alpha's session nor start one on alpha's worker,
  // and the error is the same as for an id that does not exist.
  Status stepped = beta.step(alphaWorker, session);
  EXPECT_EQ(stepped.code(), ErrorCode::kNotFound);
  EXPECT_EQ(beta.start(alphaWorker).status().code(), ErrorCode::kNotFound);
  auto released = beta.call(
      0, [&](wire::Request::Builder r) { r.initReleaseWorker().setWorkerId(alphaWorker); });
  EXPECT_EQ(released.status().code(), ErrorCode::kNotFound);
  auto list = beta.call(0, [](wire::Request::Builder r) { r.initListUnderlying(); });
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->envelope().getReply().getUnderlyingView().getWorkers().size(), 0u);
  EXPECT_TRUE(alpha.step(alphaWorker, session).ok());
}

TEST(Nesting, CoordinatorPlacesExperimentsAndSessionsStepOnTheirWorkers) {
  auto cluster = LocalCluster::start(nestingOptions(2)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto alpha = connect(cluster->coordinatorEndpoint(), "alpha");
  auto beta = connect(cluster->coordinatorEndpoint(), "beta");
  ASSERT_TRUE(alpha->openExperiment(experiment("alpha", 2)).ok());
  ASSERT_TRUE(beta->openExperiment(experiment("beta", 2)).ok());
  auto alphaStatus = alpha->waitForExperiment("alpha", 2, 5s);
  ASSERT_TRUE(alphaStatus.ok()) << alphaStatus.status().toString();
  ASSERT_TRUE(beta->waitForExperiment("beta", 2, 5s).ok());
  // Spread: one worker of each experiment on each host.
  EXPECT_NE(alphaStatus->workers[0].hostId, alphaStatus->workers[1].hostId);

  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < 4; ++i) {
    for (auto* c : {alpha.get(), beta.get()}) {
      auto session = c->startSession({"noop", "benchmark://noop/x"});
      ASSERT_TRUE(session.ok()) << session.status().toString();
      EXPECT_NE((*session)->target(), 0u);
      sessions.push_back(std::move(session).value());
    }
  }
  for (auto& session : sessions) {
    auto stepped = session->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 2);
  }
  // A forked session lives on the same underlying worker and steps alone.
  auto fork = sessions[0]->fork();
  ASSERT_TRUE(fork.ok()) << fork.status().toString();
  EXPECT_EQ((*fork)->target(), sessions[0]->target());

  // An experiment's client sees only its own experiment.
  auto seen = beta->clusterStatus();
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->experiments.size(), 1u);
  EXPECT_EQ(seen->experiments[0].spec.name, "beta");
  for (const auto& host : seen->workers) {
    for (const auto& under : host.underlying) EXPECT_EQ(under.spec.experiment, "beta");
  }
  // An operator sees both.
  auto all = connect(cluster->coordinatorEndpoint())->clusterStatus();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->experiments.size(), 2u);
}

TEST(Nesting, AnExperimentThatVanishesIsClosedWhileAnotherKeepsStepping) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto steady = connect(cluster->coordinatorEndpoint(), "steady");
  ASSERT_TRUE(steady->openExperiment(experiment("steady", 1)).ok());
  ASSERT_TRUE(steady->waitForExperiment("steady", 1, 5s).ok());
  auto session = steady->startSession({"noop", "benchmark://noop/x"}).value();
  {
    auto doomed = connect(cluster->coordinatorEndpoint(), "doomed");
    ASSERT_TRUE(doomed->openExperiment(experiment("doomed", 1)).ok());
    ASSERT_TRUE(doomed->waitForExperiment("doomed", 1, 5s).ok());
    auto lost = doomed->startSession({"noop", "benchmark://noop/x"});
    ASSERT_TRUE(lost.ok());
    // Leaked, as when the process is killed: no EndSession ever goes out.
    // (Intentional; the sanitizer build is told so.)
    client::Session* leaked = (*lost).release();
#if defined(__SANITIZE_ADDRESS__)
    __lsan_ignore_object(leaked);
#else
    (void)leaked;
#endif
    // The client goes away without closing its experiment.
  }
  auto operatorClient = connect(cluster->coordinatorEndpoint());
  auto deadline = std::chrono::steady_clock::now() + 10s;
  bool closed = false;
  int steps = 0;
  while (std::chrono::steady_clock::now() < deadline && !closed) {
    ASSERT_TRUE(session->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
    ++steps;
    auto status = operatorClient->clusterStatus().value();
    bool experimentGone = status.experiments.size() == 1;
    bool workerGone = true;
    for (const auto& host : status.workers) {
      for (const auto& under : host.underlying) workerGone &= under.spec.experiment != "doomed";
    }
    closed = experimentGone && workerGone;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(closed) << "the vanished experiment was not closed and released";
  EXPECT_GT(steps, 10);
  EXPECT_TRUE(session->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
}

TEST(Nesting, BenchmarkCacheIsSharedAcrossExperiments) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto alpha = connect(cluster->coordinatorEndpoint(), "alpha");
  auto beta = connect(cluster->coordinatorEndpoint(), "beta");
  ASSERT_TRUE(alpha->openExperiment(experiment("alpha", 1)).ok());
  ASSERT_TRUE(beta->openExperiment(experiment("beta", 1)).ok());
  ASSERT_TRUE(alpha->waitForExperiment("alpha", 1, 5s).ok());
  ASSERT_TRUE(beta->waitForExperiment("beta", 1, 5s).ok());
  client::SessionOptions withBytes{"noop", "benchmark://shared/program"};
  withBytes.program = std::string(1000, 'x');
  ASSERT_TRUE(alpha->startSession(withBytes).ok());
  // beta names the benchmark only: the host's cache has it from alpha.
  ASSERT_TRUE(beta->startSession({"noop", "benchmark://shared/program"}).ok());
  auto counters = beta->workerParameter(cluster->workerEndpoints()[0],
                                        "service.benchmark_cache.get_counters", "");
  ASSERT_TRUE(counters.ok()) << counters.status().toString();
  EXPECT_NE(counters->find("hits=1"), std::string::npos) << *counters;
}

TEST(Nesting, WorkPoolRunsUnitsOnFreeWorkersAndCancelsTheRest) {
  auto cluster = LocalCluster::start(nestingOptions(1)).value();
  ASSERT_TRUE(cluster->waitUntilReady(5s).ok());
  auto owner = connect(cluster->coordinatorEndpoint(), "pool");
  ASSERT_TRUE(owner->openExperiment(experiment("pool", 2)).ok());
  ASSERT_TRUE(owner->waitForExperiment("pool", 2, 5s).ok());
  client::ClientOptions options;
  options.coordinator = cluster->coordinatorEndpoint();
  options.experiment = "pool";
  options.requestTimeout = 5s;
  auto pool = client::WorkPool::create(options, 2).value();

  // An episode per unit: start, a few steps, end; the result is the sum.
  auto episode = [](client::WorkContext& context) -> Result<std::int64_t> {
    KILN_ASSIGN_OR_RETURN(auto session,
                          context.client.startSession({"noop", "benchmark://noop/x"}));
    KILN_RETURN_IF_ERROR(session->setParameter("noop.busy_us", "2000").status());
    std::int64_t sum = 0;
    for (int i = 0; i < 5 && !context.cancelled.load(); ++i) {
      KILN_ASSIGN_OR_RETURN(
          auto stepped, session->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}));
      sum = stepped.observations[0].as<std::int64_t>();
    }
    KILN_RETURN_IF_ERROR(session->end());
    return sum;
  };
  std::vector<std::future<Result<std::int64_t>>> round;
  for (int i = 0; i < 8; ++i) round.push_back(pool->submit<std::int64_t>(episode));
  pool->wait();
  for (auto& future : round) {
    auto result = future.get();
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_EQ(*result, 5);
  }

  // End of a round: what has not started is dropped, with a clear status.
  std::vector<std::future<Result<std::int64_t>>> late;
  for (int i = 0; i < 40; ++i) late.push_back(pool->submit<std::int64_t>(episode));
  std::this_thread::sleep_for(30ms);
  std::size_t dropped = pool->cancel();
  pool->wait();
  EXPECT_GT(dropped, 0u);
  std::size_t cancelled = 0;
  for (auto& future : late) {
    auto result = future.get();
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), ErrorCode::kTimeout);
      ++cancelled;
    }
  }
  EXPECT_EQ(cancelled, dropped);
  EXPECT_EQ(pool->outstanding(), 0u);
}

}  // namespace
}  // namespace kiln
