// The coordinator's registry, liveness and placement driven by a fake clock,
// without sockets (placement as a pure policy: placement_index_test.cpp).
#include <gtest/gtest.h>

#include <numeric>

#include "common/base/wire_convert.h"
#include "coordinator/coordinator_core.h"
#include "tests/support/test_identity.h"

namespace kiln {
namespace {

class CoordinatorCoreTest : public ::testing::Test {
 protected:
  CoordinatorCoreTest() : core_(CoordinatorConfig{}, clock_, makeNullLogger("c")) {}

  std::vector<Outgoing> send(const std::string& peer,
                             const std::function<void(wire::Envelope::Builder)>& fill,
                             std::uint16_t version = wire::PROTOCOL_VERSION) {
    capnp::MallocMessageBuilder builder;
    auto envelope = initEnvelope(builder, 5);
    envelope.setProtocolVersion(version);
    fill(envelope);
    zmq::message_t frame = encodeFrame(builder);
    std::vector<Outgoing> out;
    target_->handle(peer, InboundMessage::decode(frame, FrameLimits{}).value(), out);
    return out;
  }

  static wire::Envelope::Reader decode(std::vector<Outgoing>& out, std::size_t i,
                                       std::optional<InboundMessage>& keep) {
    keep.emplace(InboundMessage::decode(out.at(i).frame, FrameLimits{}).value());
    return keep->envelope();
  }

  // Each peer listens at its own endpoint unless told otherwise (one process
  // per endpoint: a second registration there replaces the first).
  void registerWorker(const std::string& peer, std::string endpoint = {}) {
    if (endpoint.empty()) endpoint = "tcp://" + peer + ":9";
    auto out = send(peer, [&](wire::Envelope::Builder e) {
      auto r = e.initRequest().initRegisterWorker();
      r.setEndpoint(endpoint);
      r.setSlots(2);
      r.initSessionTypes(1).set(0, "noop");
      r.setPassKey(PassKey::draw().wire());
    });
    std::optional<InboundMessage> keep;
    ASSERT_TRUE(decode(out, 0, keep).getReply().isRegistered());
  }

  void heartbeat(const std::string& peer) {
    send(peer, [](wire::Envelope::Builder e) { e.initHeartbeat().initLoad().setLiveSessions(3); });
  }

  std::size_t tick() {
    std::vector<Outgoing> out;
    core_.tick(out);
    return core_.workers().size();
  }

  FakeClock clock_;
  CoordinatorCore core_;
  CoordinatorCore* target_ = &core_;  // where send() delivers (a test may restart it)
};

TEST_F(CoordinatorCoreTest, SilentWorkerIsLostAfterThreeIntervals) {
  registerWorker("w1");
  clock_.advance(std::chrono::milliseconds(2900));
  EXPECT_EQ(tick(), 1u);
  clock_.advance(std::chrono::milliseconds(200));
  EXPECT_EQ(tick(), 0u);
  EXPECT_EQ(core_.workersLost(), 1u);
}

TEST_F(CoordinatorCoreTest, ARegistrationAtAListedEndpointReplacesItsDeadPredecessorAtOnce) {
  registerWorker("old", "tcp://10.0.0.2:7000");
  registerWorker("other", "tcp://10.0.0.3:7000");
  // Started again on the same address after a crash: a new connection.
  registerWorker("new", "tcp://10.0.0.2:7000");
  ASSERT_EQ(core_.workers().size(), 2u);
  EXPECT_EQ(core_.workersLost(), 1u);
  for (const auto& [id, worker] : core_.workers()) EXPECT_NE(worker.routingId, "old");
  // The predecessor's heartbeats (were it still around) get it told to
  // register again, as any unknown worker is.
  auto out = send("old", [](wire::Envelope::Builder e) { e.initHeartbeat(); });
  std::optional<InboundMessage> keep;
  EXPECT_TRUE(decode(out, 0, keep).isDisconnect());
  // A worker that registers again on its own connection is replaced, not doubled.
  registerWorker("other", "tcp://10.0.0.3:7000");
  EXPECT_EQ(core_.workers().size(), 2u);
  EXPECT_EQ(core_.workersLost(), 1u);
}

TEST_F(CoordinatorCoreTest, AClientsAvoidListNamesDeadWorkersByIdNotTheirReplacements) {
  registerWorker("a", "tcp://10.0.0.2:7000");
  registerWorker("b", "tcp://10.0.0.3:7000");
  std::uint64_t deadA = 0;
  for (const auto& [id, worker] : core_.workers()) {
    if (worker.routingId == "a") deadA = id.value;
  }
  registerWorker("a2", "tcp://10.0.0.2:7000");  // a's replacement, at a's endpoint
  auto place = [&](std::vector<std::uint64_t> workers, std::vector<std::string> endpoints) {
    auto out = send("client", [&](wire::Envelope::Builder e) {
      auto p = e.initRequest().initPlace();
      p.setSessionType("noop");
      auto w = p.initAvoidWorkers(workers.size());
      for (unsigned i = 0; i < workers.size(); ++i) w.set(i, workers[i]);
      auto a = p.initAvoid(endpoints.size());
      for (unsigned i = 0; i < endpoints.size(); ++i) a.set(i, endpoints[i]);
    });
    std::optional<InboundMessage> keep;
    auto reply = decode(out, 0, keep).getReply();
    return reply.isPlacement() ? std::string(reply.getPlacement().getEndpoint().cStr())
                               : std::string("refused");
  };
  // Avoiding b, and the dead a by id: a's replacement takes it.
  std::uint64_t idB = 0;
  for (const auto& [id, worker] : core_.workers()) {
    if (worker.routingId == "b") idB = id.value;
  }
  EXPECT_EQ(place({deadA, idB}, {}), "tcp://10.0.0.2:7000");
  // Avoiding a's endpoint (a client that knew no id) avoids the replacement too.
  EXPECT_EQ(place({idB}, {"tcp://10.0.0.2:7000"}), "refused");
  // No honest client has seen thousands of workers die: such a list is
  // refused, not scanned on every placement.
  std::vector<std::uint64_t> many(AvoidList::kMaxEntries + 1);
  std::iota(many.begin(), many.end(), std::uint64_t{1000});
  EXPECT_EQ(place(many, {}), "refused");
}

TEST_F(CoordinatorCoreTest, LateHeartbeatCancelsThePendingLoss) {
  registerWorker("w1");
  clock_.advance(std::chrono::milliseconds(2500));  // two intervals missed
  heartbeat("w1");
  clock_.advance(std::chrono::milliseconds(2500));
  EXPECT_EQ(tick(), 1u);
  EXPECT_EQ(core_.workers().begin()->second.snapshot.liveSessions, 3u);
}

TEST_F(CoordinatorCoreTest, UnknownWorkerHeartbeatGetsDisconnect) {
  auto out = send("stranger", [](wire::Envelope::Builder e) { e.initHeartbeat(); });
  std::optional<InboundMessage> keep;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(decode(out, 0, keep).isDisconnect());
}

TEST_F(CoordinatorCoreTest, OtherProtocolVersionIsRefusedClearly) {
  auto out = send(
      "old", [](wire::Envelope::Builder e) { e.initRequest().initListCluster(); }, 999);
  std::optional<InboundMessage> keep;
  Status refusal = fromWire(decode(out, 0, keep).getReply().getError());
  EXPECT_NE(refusal.message().find("protocol version 999"), std::string::npos);
}

TEST_F(CoordinatorCoreTest, PlacementGoesToARegisteredWorker) {
  registerWorker("w1");
  auto out = send("client", [](wire::Envelope::Builder e) {
    e.initRequest().initPlace().setSessionType("noop");
  });
  std::optional<InboundMessage> keep;
  auto placement = decode(out, 0, keep).getReply().getPlacement();
  EXPECT_EQ(std::string(placement.getEndpoint().cStr()), "tcp://w1:9");
  auto wrong = send("client", [](wire::Envelope::Builder e) { e.initRequest().initStep(); });
  std::optional<InboundMessage> keep2;
  EXPECT_TRUE(decode(wrong, 0, keep2).getReply().isError());
}

TEST_F(CoordinatorCoreTest, ABenchmarkGoesBackToItsWarmWorkerWithoutCrowdingBusySlots) {
  registerWorker("w1");  // ids 1 and 2, 2 slots each, no sessions
  registerWorker("w2");
  auto placeOn = [&](const std::string& benchmark) {
    auto out = send("client", [&](wire::Envelope::Builder e) {
      auto place = e.initRequest().initPlace();
      place.setSessionType("noop");
      place.setBenchmark(benchmark);
    });
    std::optional<InboundMessage> keep;
    return decode(out, 0, keep).getReply().getPlacement().getWorkerId();
  };
  EXPECT_EQ(placeOn("benchmark://a"), 1u);  // a tie: the oldest id
  EXPECT_EQ(placeOn("benchmark://a"), 1u);  // warm, with a free slot
  EXPECT_EQ(placeOn("benchmark://a"), 2u);  // warm but busy, while worker 2 has a free slot
  EXPECT_EQ(placeOn("benchmark://b"), 2u);  // no warm worker: the least loaded
  EXPECT_EQ(core_.affinityPlacements(), 1u);
  // Both busy (1.0 per slot): warm within the slack of 1.
  EXPECT_EQ(placeOn("benchmark://a"), 1u);
  EXPECT_EQ(placeOn("benchmark://a"), 2u);  // 1.0 against 1.5: worker 2 is warm too
  EXPECT_EQ(core_.affinityPlacements(), 3u);
  EXPECT_EQ(placeOn(""), 1u);  // no benchmark named: by load (1.5 each, the oldest)
  EXPECT_EQ(core_.placements(), 7u);
}

TEST_F(CoordinatorCoreTest, APlacementCountsUntilAReportAWholeIntervalLaterHoldsIt) {
  registerWorker("w1");
  for (int i = 0; i < 2; ++i) {
    send("client",
         [](wire::Envelope::Builder e) { e.initRequest().initPlace().setSessionType("noop"); });
  }
  auto placed = [&] { return core_.workers().begin()->second.snapshot.placedSessions; };
  EXPECT_EQ(placed(), 2u);
  clock_.advance(std::chrono::milliseconds(100));
  heartbeat("w1");  // may have been sent before the starts: they still count
  EXPECT_EQ(placed(), 2u);
  clock_.advance(std::chrono::milliseconds(1000));
  heartbeat("w1");  // a whole report later: its count holds them
  EXPECT_EQ(placed(), 0u);
  EXPECT_EQ(core_.workers().begin()->second.snapshot.liveSessions, 3u);
}

TEST_F(CoordinatorCoreTest, BadRegistrationIsRefused) {
  auto out = send("w", [](wire::Envelope::Builder e) {
    e.initRequest().initRegisterWorker().setEndpoint("tcp://x:1");
  });
  std::optional<InboundMessage> keep;
  EXPECT_TRUE(decode(out, 0, keep).getReply().isError());
  EXPECT_TRUE(core_.workers().empty());
}

// Experiment keys (common/security/identity.h): the coordinator issues one per
// experiment, hands it out once, and acts for the experiment only on it.
class ExperimentKeyTest : public CoordinatorCoreTest {
 protected:
  static constexpr const char* kHostEndpoint = "tcp://127.0.0.1:9";

  void registerNestingHost(const std::string& peer, std::vector<UnderlyingStatus> running = {},
                           const std::string& endpoint = kHostEndpoint) {
    auto out = send(peer, [&](wire::Envelope::Builder e) {
      auto r = e.initRequest().initRegisterWorker();
      r.setEndpoint(endpoint);
      r.setSlots(2);
      r.setNesting(true);
      r.setPassKey(PassKey::draw().wire());
      r.initSessionTypes(1).set(0, "noop");
      auto list = r.initUnderlying(running.size());
      for (unsigned i = 0; i < running.size(); ++i) toWire(running[i], list[i]);
    });
    std::optional<InboundMessage> keep;
    ASSERT_TRUE(decode(out, 0, keep).getReply().isRegistered());
  }

  // Sends an experiment request for `name` presenting `key` (raw bytes).
  std::vector<Outgoing> request(const std::string& name, const std::string& key,
                                const std::function<void(wire::Request::Builder)>& fill) {
    return send("client", [&](wire::Envelope::Builder e) {
      e.setExperiment(name);
      e.setExperimentKey(testsupport::asData(key));
      fill(e.initRequest());
    });
  }

  static void openSpec(wire::Request::Builder r, const std::string& name) {
    auto spec = r.initOpenExperiment().initSpec();
    spec.setName(name);
    spec.setWorkers(1);
    spec.setWeight(1);
  }

  // The answer to the client among what the core sent (creates may come first).
  static wire::Reply::Reader replyIn(std::vector<Outgoing>& out,
                                     std::optional<InboundMessage>& keep) {
    for (auto& message : out) {
      if (message.routingId != "client") continue;
      keep.emplace(InboundMessage::decode(message.frame, FrameLimits{}).value());
      return keep->envelope().getReply();
    }
    ADD_FAILURE() << "no answer to the client";
    keep.emplace(InboundMessage::decode(encodeErrorReply(0, internalError("none")), {}).value());
    return keep->envelope().getReply();
  }
  static Status answer(std::vector<Outgoing>& out) {
    std::optional<InboundMessage> keep;
    auto reply = replyIn(out, keep);
    return reply.isError() ? fromWire(reply.getError()) : okStatus();
  }

  // The experiment passes that createWorker requests among `out` carry, by host.
  std::map<std::string, std::string> passesSent(std::vector<Outgoing>& out) {
    std::map<std::string, std::string> passes;
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::optional<InboundMessage> created;
      auto envelope = decode(out, i, created);
      if (envelope.isRequest() && envelope.getRequest().isCreateWorker()) {
        auto bytes = envelope.getRequest().getCreateWorker().getSpec().getExperimentPass();
        passes[out[i].routingId].assign(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
      }
    }
    return passes;
  }

  // Opens `name`; returns the key (raw) and the pass sent in createWorker.
  std::pair<std::string, std::string> open(const std::string& name, const std::string& key = {}) {
    auto out = request(name, key, [&](wire::Request::Builder r) { openSpec(r, name); });
    std::optional<InboundMessage> keep;
    auto view = replyIn(out, keep).getExperimentView();
    std::string issued(reinterpret_cast<const char*>(view.getKey().begin()), view.getKey().size());
    auto passes = passesSent(out);
    return {issued, passes.empty() ? std::string() : passes.begin()->second};
  }
};

TEST_F(ExperimentKeyTest, OpeningIssuesAKeyAndHostsGetOnlyTheirPass) {
  registerNestingHost("h1");
  auto [key, pass] = open("alpha");
  ASSERT_EQ(key.size(), kSecretBytes);
  EXPECT_EQ(pass, experimentPass(keyDigest(key), kHostEndpoint));
  EXPECT_NE(pass, keyDigest(key));
  // Another experiment gets another key.
  EXPECT_NE(open("beta").first, key);
}

// Issue 48: each host is given a pass made for its own endpoint, so what one
// host holds opens no other; and the cluster view shows no pass at all.
TEST_F(ExperimentKeyTest, EachHostGetsItsOwnPassAndNoViewShowsOne) {
  registerNestingHost("h1", {}, "tcp://127.0.0.1:9");
  registerNestingHost("h2", {}, "tcp://127.0.0.1:10");
  auto out = request("alpha", "", [&](wire::Request::Builder r) {
    openSpec(r, "alpha");
    r.getOpenExperiment().getSpec().setWorkers(2);
  });
  std::optional<InboundMessage> keep;
  auto view = replyIn(out, keep).getExperimentView();
  const std::string key(reinterpret_cast<const char*>(view.getKey().begin()), view.getKey().size());
  auto passes = passesSent(out);
  ASSERT_EQ(passes.size(), 2u) << "expected one worker on each host";
  EXPECT_EQ(passes["h1"], experimentPass(keyDigest(key), "tcp://127.0.0.1:9"));
  EXPECT_EQ(passes["h2"], experimentPass(keyDigest(key), "tcp://127.0.0.1:10"));
  EXPECT_NE(passes["h1"], passes["h2"]);
  // The hosts report their workers with the passes; no view shows them.
  for (const auto& [peer, pass] : passes) {
    UnderlyingStatus running;
    running.spec.experiment = "alpha";
    running.spec.experimentPass = pass;
    send(peer, [&](wire::Envelope::Builder e) {
      auto list = e.initHeartbeat().initUnderlying(1);
      toWire(running, list[0]);
    });
  }
  auto listed =
      send("client", [](wire::Envelope::Builder e) { e.initRequest().initListCluster(); });
  std::optional<InboundMessage> listing;
  auto hosts = replyIn(listed, listing).getClusterView().getWorkers();
  std::size_t shown = 0;
  for (auto host : hosts) {
    for (auto worker : host.getUnderlying()) {
      ++shown;
      EXPECT_EQ(worker.getSpec().getExperimentPass().size(), 0u) << "a view showed a pass";
    }
  }
  EXPECT_EQ(shown, 2u);
}

TEST_F(ExperimentKeyTest, OnlyTheKeyHolderActsForTheExperiment) {
  registerNestingHost("h1");
  std::string key = open("alpha").first;
  std::string wrong = std::string(Secret::draw().bytes());
  const std::vector<std::function<void(wire::Request::Builder)>> acts = {
      [](wire::Request::Builder r) { r.initGetExperiment().setName("alpha"); },
      [](wire::Request::Builder r) { r.initPlace().setSessionType("noop"); },
      [](wire::Request::Builder r) { r.initKeepAlive(); },
      [](wire::Request::Builder r) { openSpec(r, "alpha"); },
      [](wire::Request::Builder r) { r.initCloseExperiment().setName("alpha"); }};
  for (std::size_t i = 0; i < acts.size(); ++i) {
    SCOPED_TRACE(i);
    for (const std::string& presented : {std::string(), wrong, std::string(5, 'k')}) {
      auto out = request("alpha", presented, acts[i]);
      Status refused = answer(out);
      EXPECT_NE(refused.code(), ErrorCode::kOk);
      if (presented.size() == kSecretBytes || presented.empty()) {
        EXPECT_EQ(refused.code(), ErrorCode::kPermissionDenied) << refused.toString();
      }
    }
  }
  // A name written in the request without its key closes nothing either.
  auto out =
      request("", "", [](wire::Request::Builder r) { r.initCloseExperiment().setName("alpha"); });
  EXPECT_EQ(answer(out).code(), ErrorCode::kPermissionDenied);
  ASSERT_NE(core_.experiments().find("alpha"), nullptr);
  // The holder does all of it.
  for (std::size_t i = 0; i + 1 < acts.size(); ++i) {
    auto done = request("alpha", key, acts[i]);
    Status status = answer(done);
    // Placement finds no ready worker yet (no heartbeat listed it): retryable.
    EXPECT_TRUE(status.ok() || status.code() == ErrorCode::kOverloaded) << status.toString();
  }
  auto closed = request("alpha", key, acts.back());
  EXPECT_TRUE(answer(closed).ok());
  EXPECT_EQ(core_.experiments().find("alpha"), nullptr);
}

TEST_F(ExperimentKeyTest, AWeightAboveTheOperatorsIsRefused) {
  registerNestingHost("h1");
  auto out = request("greedy", "", [](wire::Request::Builder r) {
    auto spec = r.initOpenExperiment().initSpec();
    spec.setName("greedy");
    spec.setWorkers(1);
    spec.setWeight(CoordinatorConfig{}.experiments.maxWeight + 1);
  });
  Status refused = answer(out);
  EXPECT_EQ(refused.code(), ErrorCode::kPermissionDenied) << refused.toString();
  EXPECT_NE(refused.message().find("--max-experiment-weight"), std::string::npos);
  EXPECT_EQ(core_.experiments().find("greedy"), nullptr);
}

// Each experiment costs nesting hosts a child process and workers: one
// client may hold only so many open, all clients together only so many, and
// each asks for only so many workers (issue 48: 20 experiments from one
// client meant 32 child processes on one kiln nest).
TEST_F(ExperimentKeyTest, ExperimentsAreBoundedPerClientAndInAll) {
  CoordinatorConfig config;
  config.experiments.maxPerClient = 2;
  config.experiments.maxExperiments = 3;
  config.experiments.maxWorkers = 2;
  CoordinatorCore bounded(config, clock_, makeNullLogger("c"));
  target_ = &bounded;
  // Sends `fill` as client `client`, presenting `key`; the answer, and the
  // key an open issued.
  std::string issued;
  auto callAs = [&](std::uint64_t client, const std::string& key,
                    const std::function<void(wire::Request::Builder)>& fill) {
    auto out = send("client", [&](wire::Envelope::Builder e) {
      testsupport::setTestClient(e, client);
      e.setExperimentKey(testsupport::asData(key));
      fill(e.initRequest());
    });
    std::optional<InboundMessage> keep;
    auto reply = replyIn(out, keep);
    if (reply.isExperimentView()) {
      auto bytes = reply.getExperimentView().getKey();
      issued.assign(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
    }
    return reply.isError() ? fromWire(reply.getError()) : okStatus();
  };
  auto openAs = [&](const std::string& name, std::uint64_t client, std::uint32_t workers = 1) {
    return callAs(client, "", [&](wire::Request::Builder r) {
      auto spec = r.initOpenExperiment().initSpec();
      spec.setName(name);
      spec.setWorkers(workers);
      spec.setWeight(1);
    });
  };
  auto expectRefused = [](const Status& refused, ErrorCode code, const std::string& flag) {
    EXPECT_EQ(refused.code(), code) << refused.toString();
    EXPECT_NE(refused.message().find("(limit " + flag + ")"), std::string::npos)
        << refused.toString();
  };
  expectRefused(openAs("wide", 1, 3), ErrorCode::kPermissionDenied, "--max-experiment-workers");
  ASSERT_TRUE(openAs("a1", 1, 2).ok());
  ASSERT_TRUE(openAs("a2", 1).ok());
  expectRefused(openAs("a3", 1), ErrorCode::kOverloaded, "--max-experiments-per-client");
  EXPECT_EQ(bounded.experiments().find("a3"), nullptr);
  const ExperimentRecord* a1 = bounded.experiments().find("a1");
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(a1->owner, testsupport::testClientId(1));
  ASSERT_TRUE(openAs("b1", 2).ok());  // another client has a quota of its own
  const std::string b1Key = issued;
  expectRefused(openAs("c1", 3), ErrorCode::kOverloaded, "--max-experiments");
  // Closing one gives its place back.
  ASSERT_TRUE(callAs(2, b1Key, [](wire::Request::Builder r) {
                r.initCloseExperiment().setName("b1");
              }).ok());
  EXPECT_TRUE(openAs("c1", 3).ok());
}

// A restarted coordinator knows no experiment; the hosts report the workers
// they run with their digests. The client that re-opens with its key gets
// them back; someone else who opens the name first gets none of them.
TEST_F(ExperimentKeyTest, ARestartedCoordinatorHandsWorkersBackOnlyForTheirKey) {
  std::string key = std::string(Secret::draw().bytes());
  UnderlyingStatus running;
  running.spec.workerId = 0xabc;
  running.spec.experiment = "alpha";
  running.spec.experimentPass = experimentPass(keyDigest(key), kHostEndpoint);
  registerNestingHost("h1", {running});
  auto [squatterKey, squatterPass] = open("alpha", std::string(Secret::draw().bytes()));
  // A worker of its own is created.
  EXPECT_EQ(squatterPass, experimentPass(keyDigest(squatterKey), kHostEndpoint));
  const ExperimentRecord* record = core_.experiments().find("alpha");
  ASSERT_NE(record, nullptr);
  EXPECT_FALSE(record->workers.contains(0xabc));

  CoordinatorCore restarted(CoordinatorConfig{}, clock_, makeNullLogger("c"));
  target_ = &restarted;
  registerNestingHost("h1", {running});
  auto [reopened, created] = open("alpha", key);
  EXPECT_EQ(reopened, key);
  EXPECT_TRUE(created.empty()) << "the reported worker was not adopted";
  record = restarted.experiments().find("alpha");
  ASSERT_NE(record, nullptr);
  EXPECT_TRUE(record->workers.contains(0xabc));
}

}  // namespace
}  // namespace kiln
