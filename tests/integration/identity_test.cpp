// Identity over real sockets, without a key and with CURVE: a second client
// of the cluster, knowing a first client's session ids, worker ids and
// experiment name, cannot step, read, fork, reconfigure or end that
// client's sessions, nor place into, look at, re-open, keep alive or close
// its experiment, unless it holds what the servers issued (the session's
// owner secret, the experiment key). With the key, a colleague joins the
// experiment, yet still not the first client's sessions.
#include <gtest/gtest.h>

#include <kiln/curve_keys.h>
#include "client/zmq_channel.h"
#include "common/base/wire_convert.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

class IdentityTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      if (!curveAvailable()) GTEST_SKIP() << "this libzmq has no CURVE";
      keys_ = generateClusterKeys().value();
    }
    LocalClusterOptions options;
    options.workers = 1;
    options.nestingHosts = 1;
    options.worker.slots = 2;
    options.log.level = spdlog::level::off;
    options.coordinator.heartbeatInterval = 100ms;
    options.worker.link.heartbeatInterval = 100ms;
    options.keys = keys_;
    cluster_ = LocalCluster::start(options).value();
    ASSERT_TRUE(cluster_->waitUntilReady(5s).ok());
  }

  std::unique_ptr<client::Client> connect(const std::string& experiment = {},
                                          const std::string& key = {}) {
    client::ClientOptions options;
    options.coordinator = cluster_->coordinatorEndpoint();
    options.experiment = experiment;
    options.experimentKey = key;
    options.requestTimeout = 10s;
    options.keys = keys_;
    return client::Client::connect(options).value();
  }

  // A stranger's raw requests to `endpoint`, as its own client (a secret of
  // its own), acting for `experiment` with `key` (hex; empty = none).
  Status strangerCalls(const std::string& endpoint, std::uint64_t target,
                       const std::function<void(wire::Request::Builder)>& fill,
                       const std::string& experiment = {}, const std::string& key = {}) {
    client::RequestIdentity identity;
    identity.experiment = experiment;
    if (!key.empty()) identity.experimentKey = Secret::fromHex(key).value();
    client::ZmqChannel channel(zmq_, endpoint, identity, FrameLimits{}, {}, keys_);
    channel.carrySecret();  // a client of its own, not an anonymous one
    capnp::MallocMessageBuilder builder;
    fill(channel.begin(builder, 5s, target).initRequest());
    return channel.call(builder, 5s).status();
  }

  // Every request that touches a session, each refused as not found: by the
  // session's owner check, which answers as for an id that never existed,
  // or by a nesting host that shows the worker only to holders of its key.
  void expectSessionRefused(const client::Session& session, const std::string& experiment = {},
                            const std::string& key = {},
                            ErrorCode expected = ErrorCode::kNotFound) {
    const std::uint64_t id = session.id().value;
    const std::vector<std::pair<std::string, std::function<void(wire::Request::Builder)>>>
        requests = {
            {"step",
             [&](wire::Request::Builder r) {
               auto step = r.initStep();
               step.setSessionId(id);
               toWire(Value(std::int64_t{5}), step.initActions(1)[0]);
             }},
            {"read",
             [&](wire::Request::Builder r) {
               auto step = r.initStep();
               step.setSessionId(id);
               step.initObservationSpaces(1).set(0, 0);
             }},
            {"fork", [&](wire::Request::Builder r) { r.initFork().setSessionId(id); }},
            {"parameter",
             [&](wire::Request::Builder r) {
               auto parameter = r.initSendSessionParameter();
               parameter.setSessionId(id);
               parameter.setKey("noop.busy_us");
               parameter.setValue("1");
             }},
            {"end", [&](wire::Request::Builder r) { r.initEndSession().setSessionId(id); }}};
    for (const auto& [what, fill] : requests) {
      Status refused = strangerCalls(session.endpoint(), session.target(), fill, experiment, key);
      EXPECT_EQ(refused.code(), expected) << what << ": " << refused.toString();
    }
  }

  zmq::context_t zmq_{1};
  std::optional<ClusterKeys> keys_;
  std::unique_ptr<LocalCluster> cluster_;
};

TEST_P(IdentityTest, AnotherClientCannotTouchASessionOnAPlainWorker) {
  auto owner = connect();
  auto session = owner->startSession({"noop", "benchmark://identity/a"}).value();
  ASSERT_TRUE(session->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"}).ok());
  expectSessionRefused(*session);
  // Nothing the stranger sent reached it: the sum is the owner's alone.
  auto stepped = session->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 3);
  EXPECT_EQ(session->restores(), 0u);
}

TEST_P(IdentityTest, AnExperimentActsOnlyForItsKey) {
  auto owner = connect("alpha");
  ExperimentSpec spec;
  spec.name = "alpha";
  auto opened = owner->openExperiment(spec);
  ASSERT_TRUE(opened.ok()) << opened.status().toString();
  ASSERT_EQ(opened->key.size(), 2 * kSecretBytes);
  ASSERT_TRUE(owner->waitForExperiment("alpha", 1, 5s).ok());
  auto session = owner->startSession({"noop", "benchmark://identity/a"}).value();
  ASSERT_NE(session->target(), 0u);

  // Without the key, or with another, a client of the same name gets nothing.
  for (const std::string& key : {std::string(), Secret::draw().hex()}) {
    SCOPED_TRACE("key '" + key + "'");
    auto stranger = connect("alpha", key);
    auto placed = stranger->startSession({"noop", "benchmark://identity/b"});
    EXPECT_EQ(placed.status().code(), ErrorCode::kPermissionDenied) << placed.status().toString();
    EXPECT_EQ(stranger->experimentStatus("alpha").status().code(), ErrorCode::kPermissionDenied);
    EXPECT_EQ(stranger->openExperiment(spec).status().code(), ErrorCode::kPermissionDenied);
    EXPECT_EQ(stranger->closeExperiment("alpha").code(), ErrorCode::kPermissionDenied);
    // Straight at the nesting host, naming the worker id it saw placed.
    Status started = strangerCalls(
        session->endpoint(), session->target(),
        [](wire::Request::Builder r) {
          auto start = r.initStartSession();
          start.setSessionType("noop");
          start.initBenchmark().setUri("benchmark://identity/c");
        },
        "alpha", key);
    EXPECT_EQ(started.code(), ErrorCode::kNotFound) << started.toString();
    expectSessionRefused(*session, "alpha", key, ErrorCode::kNotFound);
  }
  auto status = owner->experimentStatus("alpha");
  ASSERT_TRUE(status.ok()) << status.status().toString();

  // A colleague given the key joins the experiment, but owns only its own sessions.
  auto colleague = connect("alpha", opened->key);
  auto own = colleague->startSession({"noop", "benchmark://identity/d"});
  ASSERT_TRUE(own.ok()) << own.status().toString();
  ASSERT_TRUE((*own)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
  ASSERT_TRUE(colleague->experimentStatus("alpha").ok());
  expectSessionRefused(*session, "alpha", opened->key);

  auto after = session->step({Value(std::int64_t{4})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(after.ok()) << after.status().toString();
  EXPECT_EQ(after->observations[0].as<std::int64_t>(), 4);
  EXPECT_TRUE(owner->closeExperiment("alpha").ok());
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutCurve, IdentityTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Curve" : "Plaintext"; });

}  // namespace
}  // namespace kiln
