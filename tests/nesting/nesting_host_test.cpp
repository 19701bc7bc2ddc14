// The nesting host's addressing rules (nesting/nesting_host.h) over a
// recording backend: what reaches a backend, for whom, and what everyone
// else is told. The in-process and child-process backends are exercised
// through real hosts in nesting_test and tests/fault.
#include "nesting/nesting_host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/base/wire_convert.h"
#include "common/types/underlying_wire.h"
#include "nesting/host_policy.h"
#include "tests/support/host_fakes.h"
#include "tests/support/test_identity.h"

namespace kiln::nesting {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testsupport::asData;

class RecordingBackend final : public UnderlyingBackend {
 public:
  explicit RecordingBackend(UnderlyingDirectory& directory) : directory_(directory) {}

  Status usable() const override { return usableStatus; }
  Status create(const UnderlyingSpec& spec) override {
    calls.push_back(fmt::format("create {} {}", spec.workerId, spec.experiment));
    return createStatus;
  }
  void release(const UnderlyingSpec& spec) override {
    calls.push_back(fmt::format("release {}", spec.workerId));
    if (releaseAtOnce) directory_.released(spec.workerId, 3);
  }
  void forget(const UnderlyingSpec& spec, bool last) override {
    calls.push_back(fmt::format("forget {}{}", spec.workerId, last ? " last" : ""));
  }
  void forward(const UnderlyingSpec& spec, const std::string& routingId, InboundMessage) override {
    calls.push_back(fmt::format("forward {} from {}", spec.workerId,
                                routingId == kCoordinatorRoute ? "coordinator" : routingId));
  }
  void keepAlive(ClientId, const std::vector<std::uint64_t>& workers) override {
    calls.push_back(fmt::format("keep-alive {}", fmt::join(workers, ",")));
  }
  void addBenchmark(const std::vector<std::uint64_t>& workers, const InboundMessage&) override {
    calls.push_back(fmt::format("benchmark {}", fmt::join(workers, ",")));
  }
  void setWeights(const std::map<std::string, std::uint32_t>& weights) override {
    std::vector<std::string> shares;
    for (const auto& [experiment, weight] : weights) {
      shares.push_back(fmt::format("{}={}", experiment, weight));
    }
    calls.push_back(fmt::format("weights {}", fmt::join(shares, ",")));
  }
  LoadReport load() const override {
    LoadReport report;
    for (const auto& [id, worker] : directory_.workers()) {
      if (!worker.releasing) report.underlying.push_back({worker.spec, LoadFigures{}});
    }
    return report;
  }
  std::size_t dropSessionsOfClientsSilentSince(TimePoint, const std::string& why) override {
    calls.push_back("drop silent clients: " + why);
    return 2;
  }
  void onCompletion(Completion) override {}
  void tick() override {}
  void clear() override {}
  // What a backend says when a worker's sessions are all gone.
  void report(std::uint64_t workerId, std::uint32_t sessionsEnded) {
    directory_.released(workerId, sessionsEnded);
  }

  std::vector<std::string> calls;
  Status usableStatus = okStatus();
  Status createStatus = okStatus();
  bool releaseAtOnce = true;

 private:
  UnderlyingDirectory& directory_;
};

const std::string kKeyA(kSecretBytes, 'a');
const std::string kKeyB(kSecretBytes, 'b');
// The endpoint the host under test is known by: its experiments' passes are
// made for it (common/security/identity.h).
const std::string kHost = "tcp://host-under-test:1";
const std::string kOtherHost = "tcp://another-host:1";

std::string passOn(const std::string& key, const std::string& host = kHost) {
  return experimentPass(keyDigest(key), host);
}

class NestingHostTest : public ::testing::Test {
 protected:
  NestingHostTest()
      : host_(FrontendParts{types_, cache_, HostLimits{}, clock_, pool_, sink_, mailbox_,
                            makeNullLogger("t"), std::filesystem::temp_directory_path()},
              [this](const FrontendParts&, UnderlyingDirectory& directory) {
                auto backend = std::make_unique<RecordingBackend>(directory);
                backend_ = backend.get();
                return backend;
              }) {}

  struct As {
    std::string route = "client";
    std::string experiment;
    std::string key;
    std::string host = kHost;  // whose pass of `key` to present
    bool keyItself = false;    // present the key instead, as clients did before issue 48
  };
  static As coordinator() { return As{kCoordinatorRoute, "", ""}; }

  // The host's answer; nothing when it passed the request to the backend.
  std::optional<wire::Reply::Reader> send(const As& as, std::uint64_t target,
                                          const std::function<void(wire::Request::Builder)>& fill) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, ++requestId_);
    testsupport::setTestClient(envelope, 7);
    envelope.setTarget(target);
    if (!as.experiment.empty()) envelope.setExperiment(as.experiment);
    if (!as.key.empty() && as.keyItself) envelope.setExperimentKey(asData(as.key));
    if (!as.key.empty() && !as.keyItself)
      envelope.setExperimentPass(asData(passOn(as.key, as.host)));
    fill(envelope.initRequest());
    const std::size_t before = sink_.replies.size();
    host_.handle(as.route, InboundMessage::decode(encodeFrame(builder), FrameLimits{}).value());
    if (sink_.replies.size() == before) return std::nullopt;
    return sink_.replies.back().envelope().getReply();
  }

  // Creates worker `id` of `experiment` (key `key`, weight `weight`) as the coordinator.
  wire::Reply::Reader create(std::uint64_t id, const std::string& experiment,
                             const std::string& key, std::uint32_t weight = 1) {
    UnderlyingSpec spec{id, experiment, weight, 0, {}, passOn(key)};
    return *send(coordinator(), 0, [&](auto r) { toWire(spec, r.initCreateWorker().initSpec()); });
  }
  std::optional<wire::Reply::Reader> step(const As& as, std::uint64_t target) {
    return send(as, target, [](auto r) { r.initStep().setSessionId(1); });
  }

  static Status errorOf(std::optional<wire::Reply::Reader> reply) {
    if (!reply) return internalError("no answer: the request went to the backend");
    return reply->isError() ? fromWire(reply->getError()) : okStatus();
  }

  FakeClock clock_;
  BenchmarkCache cache_{1 << 20};
  SessionTypeRegistry types_;
  TaskPool pool_{1};
  testsupport::CollectingSink sink_;
  Mailbox<Completion> mailbox_;
  RecordingBackend* backend_ = nullptr;
  NestingHost host_;
  std::uint64_t requestId_ = 0;
};

TEST_F(NestingHostTest, OnlyTheCoordinatorCreatesAndReleasesWorkers) {
  UnderlyingSpec spec{5, "a", 1, 0, {}, passOn(kKeyA)};
  auto refused = send({"client", "a", kKeyA}, 0,
                      [&](auto r) { toWire(spec, r.initCreateWorker().initSpec()); });
  EXPECT_EQ(errorOf(refused).code(), ErrorCode::kPermissionDenied);
  EXPECT_TRUE(backend_->calls.empty());

  auto created = create(5, "a", kKeyA, 2);
  ASSERT_TRUE(created.isWorkerCreated()) << errorOf(created).toString();
  EXPECT_EQ(created.getWorkerCreated().getWorkerId(), 5u);
  auto release =
      send({"client", "a", kKeyA}, 0, [](auto r) { r.initReleaseWorker().setWorkerId(5); });
  EXPECT_EQ(errorOf(release).code(), ErrorCode::kPermissionDenied);
  EXPECT_THAT(backend_->calls, ElementsAre("create 5 a", "weights a=2"));
}

TEST_F(NestingHostTest, CreatingAgainIsIdempotentForTheOwnerOnly) {
  ASSERT_TRUE(create(0, "a", kKeyA).isWorkerCreated());  // 0: the host picks the id
  const std::uint64_t id =
      sink_.replies.back().envelope().getReply().getWorkerCreated().getWorkerId();
  EXPECT_NE(id, 0u);
  EXPECT_TRUE(create(id, "a", kKeyA).isWorkerCreated());
  auto stolen = create(id, "b", kKeyB);
  EXPECT_EQ(errorOf(stolen).code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(errorOf(stolen).message(), HasSubstr("already exists"));
  EXPECT_EQ(std::count_if(backend_->calls.begin(), backend_->calls.end(),
                          [](const std::string& c) { return c.starts_with("create"); }),
            1);
  EXPECT_EQ(host_.underlyingCount(), 1u);
}

TEST_F(NestingHostTest, ABackendThatCannotHostRefusesTheCreateWithItsReason) {
  backend_->usableStatus = internalError("isolation unavailable: no socket");
  EXPECT_THAT(errorOf(create(1, "a", kKeyA)).message(), HasSubstr("no socket"));
  backend_->usableStatus = okStatus();
  backend_->createStatus = overloaded("cannot fork");
  EXPECT_EQ(errorOf(create(1, "a", kKeyA)).code(), ErrorCode::kOverloaded);
  EXPECT_EQ(host_.underlyingCount(), 0u);
}

TEST_F(NestingHostTest, RequestsReachOnlyWorkersTheSenderMaySee) {
  ASSERT_TRUE(create(1, "a", kKeyA).isWorkerCreated());
  ASSERT_TRUE(create(2, "b", kKeyB).isWorkerCreated());
  backend_->calls.clear();
  EXPECT_FALSE(step({"client", "a", kKeyA}, 1).has_value());
  EXPECT_FALSE(step(coordinator(), 2).has_value());
  EXPECT_THAT(backend_->calls, ElementsAre("forward 1 from client", "forward 2 from coordinator"));
  backend_->calls.clear();

  // Another experiment's worker, a wrong key, a name without a key, and an
  // id that does not exist all get the same answer.
  for (auto [as, target] :
       std::vector<std::pair<As, std::uint64_t>>{{{"client", "a", kKeyA}, 2},
                                                 {{"client", "b", kKeyA}, 2},
                                                 {{"client", "b", ""}, 2},
                                                 {{"client", "b", kKeyB}, 99}}) {
    Status refused = errorOf(step(as, target));
    EXPECT_EQ(refused.code(), ErrorCode::kNotFound) << refused.toString();
    EXPECT_EQ(refused.message(), unknownWorker(target, as.experiment).message());
  }
  EXPECT_TRUE(backend_->calls.empty());
}

TEST_F(NestingHostTest, KeepAlivesAndBenchmarksGoToTheCallersWorkersOnly) {
  ASSERT_TRUE(create(1, "a", kKeyA).isWorkerCreated());
  ASSERT_TRUE(create(2, "a", kKeyA).isWorkerCreated());
  ASSERT_TRUE(create(3, "b", kKeyB).isWorkerCreated());
  backend_->calls.clear();
  send({"client", "a", kKeyA}, 0, [](auto r) { r.initKeepAlive(); });
  send({"client", "a", ""}, 0, [](auto r) { r.initKeepAlive(); });  // no key: nothing
  send({"client", "b", kKeyB}, 0, [](auto r) { r.initAddBenchmark().initBenchmarks(0); });
  EXPECT_THAT(backend_->calls, ElementsAre("keep-alive 1,2", "benchmark 3"));
}

TEST_F(NestingHostTest, ACutOffHostHasItsBackendDropTheSessionsOfSilentClients) {
  ASSERT_TRUE(create(1, "a", kKeyA).isWorkerCreated());
  backend_->calls.clear();
  WorkerFrontend& frontend = host_;
  EXPECT_EQ(frontend.dropSessionsOfClientsSilentSince(clock_.now(), "cut off"), 2u);
  EXPECT_THAT(backend_->calls, ElementsAre("drop silent clients: cut off"));
}

TEST_F(NestingHostTest, AReleaseIsAnsweredWhenTheBackendIsDone) {
  ASSERT_TRUE(create(1, "a", kKeyA, 3).isWorkerCreated());
  ASSERT_TRUE(create(2, "b", kKeyB).isWorkerCreated());
  backend_->releaseAtOnce = false;
  backend_->calls.clear();
  EXPECT_FALSE(send(coordinator(), 0, [](auto r) { r.initReleaseWorker().setWorkerId(1); }));
  // Meanwhile the worker is gone for everyone, and cannot be released twice.
  EXPECT_EQ(errorOf(step({"client", "a", kKeyA}, 1)).code(), ErrorCode::kNotFound);
  EXPECT_EQ(
      errorOf(send(coordinator(), 0, [](auto r) { r.initReleaseWorker().setWorkerId(1); })).code(),
      ErrorCode::kNotFound);

  // A backend's report of a worker nobody is releasing changes nothing.
  const std::size_t before = sink_.replies.size();
  backend_->report(2, 9);
  EXPECT_EQ(sink_.replies.size(), before);
  EXPECT_EQ(host_.underlyingCount(), 2u);

  backend_->report(1, 4);
  auto released = sink_.replies.back().envelope().getReply();
  ASSERT_TRUE(released.isWorkerReleased());
  EXPECT_EQ(released.getWorkerReleased().getSessionsEnded(), 4u);
  EXPECT_THAT(backend_->calls, ElementsAre("release 1", "forget 1 last", "weights b=1"));
  EXPECT_EQ(host_.underlyingCount(), 1u);
}

TEST_F(NestingHostTest, ListingShowsEachCallerItsOwnWorkers) {
  ASSERT_TRUE(create(1, "a", kKeyA).isWorkerCreated());
  ASSERT_TRUE(create(2, "b", kKeyB).isWorkerCreated());
  auto listed = [&](const As& as) {
    std::vector<std::uint64_t> ids;
    auto reply = send(as, 0, [](auto r) { r.initListUnderlying(); });
    for (auto worker : reply->getUnderlyingView().getWorkers()) {
      ids.push_back(worker.getSpec().getWorkerId());
    }
    return ids;
  };
  EXPECT_THAT(listed({"client", "a", kKeyA}), ElementsAre(1u));
  EXPECT_THAT(listed({"client", "b", kKeyA}), ElementsAre());
  EXPECT_THAT(listed(coordinator()), ElementsAre(1u, 2u));
}

// Issue 48: a host is given the experiment's pass for itself, never the key.
// Neither the key (which a host never sees) nor the pass made for another
// host reaches a worker, and a listing does not show the pass back.
TEST_F(NestingHostTest, OnlyThePassForThisHostReachesAWorker) {
  ASSERT_TRUE(create(1, "a", kKeyA).isWorkerCreated());
  EXPECT_FALSE(step({"client", "a", kKeyA}, 1).has_value());  // passed to the backend
  for (const As& as : {As{"client", "a", kKeyA, kHost, true}, As{"client", "a", kKeyA, kOtherHost},
                       As{"client", "a", keyDigest(kKeyA).substr(0, kSecretBytes)}}) {
    EXPECT_EQ(errorOf(step(as, 1)).code(), ErrorCode::kNotFound) << as.host << as.keyItself;
  }
  auto reply = send({"client", "a", kKeyA}, 0, [](auto r) { r.initListUnderlying(); });
  ASSERT_EQ(reply->getUnderlyingView().getWorkers().size(), 1u);
  EXPECT_EQ(reply->getUnderlyingView().getWorkers()[0].getSpec().getExperimentPass().size(), 0u);
}

TEST_F(NestingHostTest, SessionRequestsAtTheHostAndNonRequestsAreRefusedClearly) {
  EXPECT_THAT(errorOf(step({"client", "", ""}, 0)).message(),
              HasSubstr("address one of its underlying workers"));
  capnp::MallocMessageBuilder builder;
  initEnvelope(builder, 1).initReply().setKeptAlive();
  host_.handle("client", InboundMessage::decode(encodeFrame(builder), FrameLimits{}).value());
  EXPECT_THAT(errorOf(sink_.replies.back().envelope().getReply()).message(),
              HasSubstr("accepts only requests"));
  EXPECT_TRUE(backend_->calls.empty());
}

}  // namespace
}  // namespace kiln::nesting
