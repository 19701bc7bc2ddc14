// Partitions on a bed of network namespaces (scripts/netbed): host 1 runs the
// coordinator, hosts 2 and 3 a worker each, and the test's client runs on a
// thread that entered host 4's network. Every process is a real `kiln`.
//
// - A worker host's cable is pulled while sessions step on it: its sessions
//   are restored on the other host with no step lost, and once the cable is
//   back the cut-off host has dropped its copies: a late step to one is
//   refused, saying why.
// - The coordinator's cable is pulled: clients still reach the workers, so
//   stepping goes on, with no session restored.
// - An experiment over two nesting hosts, one cut off: its share moves to the
//   other, and the cut-off host's old underlying worker refuses late steps.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <set>
#include <thread>

#include "bench/cluster_bench.h"
#include "common/base/wire_convert.h"
#include "common/transport/frame.h"
#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"
#include "tests/support/net_bed.h"

namespace kiln::fault {
namespace {

constexpr unsigned kCoordinatorHost = 1, kClientHost = 4;

using bench::StepTally;

class PartitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto bed = testsupport::NetBed::create(KILN_NETBED, 4);
    if (!bed.ok() && bed.status().code() == ErrorCode::kUnimplemented) {
      GTEST_SKIP() << bed.status().message();
    }
    ASSERT_TRUE(bed.ok()) << bed.status().toString();
    bed_ = std::move(*bed);
    auto children = testsupport::ChildCluster::create(KILN_BINARY);
    ASSERT_TRUE(children.ok()) << children.status().toString();
    children_.emplace(std::move(*children));
    auto coordinator = children_->spawn(
        {"coordinator", "--listen", fmt::format("tcp://{}:0", bed_->address(kCoordinatorHost)),
         "--heartbeat-seconds", "0.2", "--log-level", "off"},
        bed_->runOn(kCoordinatorHost));
    ASSERT_TRUE(coordinator.ok()) << coordinator.status().toString();
    coordinator_ = (*coordinator)->endpoint;
  }

  // A `kind` ("worker" or "nest") on hosts 2 and 3, each on its own address.
  void startHosts(const std::string& kind) {
    for (unsigned host : {2u, 3u}) {
      auto started = children_->spawn({kind, "--coordinator", coordinator_, "--listen",
                                       fmt::format("tcp://{}:0", bed_->address(host)),
                                       "--heartbeat-seconds", "0.2", "--log-level", "off"},
                                      bed_->runOn(host));
      ASSERT_TRUE(started.ok()) << started.status().toString();
      workerOn_[host] = (*started)->endpoint;
    }
  }

  // Runs `body` on a thread inside the client host's network.
  void onClientHost(const std::function<void()>& body) {
    std::thread([&] {
      ASSERT_TRUE(bed_->enter(kClientHost).ok());
      body();
    }).join();
  }

  // Steps `sessions` in rounds: 5, then through a cut of `host`'s cable
  // lasting `cut`, then (after `beforeHeal`) 5 more once it is healed.
  StepTally stepThroughACut(std::vector<std::unique_ptr<client::Session>>& owned, unsigned host,
                            Duration cut, const std::function<void()>& beforeHeal = {}) {
    std::vector<client::Session*> sessions;
    for (auto& session : owned) sessions.push_back(session.get());
    std::vector<std::int64_t> expected(sessions.size(), 0);
    StepTally tally;
    for (int round = 0; round < 5; ++round) bench::stepNoopRound(sessions, expected, tally);
    EXPECT_TRUE(bed_->cut(host).ok());
    const auto cutAt = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - cutAt < cut) {
      bench::stepNoopRound(sessions, expected, tally);
    }
    if (beforeHeal) beforeHeal();
    EXPECT_TRUE(bed_->heal(host).ok());
    for (int round = 0; round < 5; ++round) bench::stepNoopRound(sessions, expected, tally);
    return tally;
  }

  // Every step answered, every session now on host 3, `moved` of them
  // restored there.
  void expectNothingLostAndAllOnHost3(const StepTally& tally, client::Client& client,
                                      const std::vector<std::unique_ptr<client::Session>>& sessions,
                                      std::size_t moved) {
    EXPECT_EQ(tally.lost, 0u) << tally.firstLoss;
    EXPECT_EQ(tally.answered, tally.attempted);
    for (const auto& session : sessions) EXPECT_EQ(session->endpoint(), workerOn_[3]);
    EXPECT_EQ(client.restoredSessions(), moved);
  }

  // Whether host 2 is listed again, back on the network, with `back` true
  // of its entry, within 40 s.
  bool host2Back(client::Client& client,
                 const std::function<bool(const client::WorkerStatus&)>& back) {
    return waitUntil(
        [&] {
          auto workers = client.listCluster();
          if (!workers.ok()) return false;
          for (const auto& w : *workers) {
            if (w.endpoint == workerOn_[2]) return back(w);
          }
          return false;
        },
        40s);
  }

  std::unique_ptr<testsupport::NetBed> bed_;
  std::optional<testsupport::ChildCluster> children_;
  std::string coordinator_;
  std::map<unsigned, std::string> workerOn_;
};

TEST_F(PartitionTest, AWorkerHostCutOffLosesNoStepAndItsCopiesRefuseLateSteps) {
  startHosts("worker");
  onClientHost([&] {
    auto client = connectClient(coordinator_, {}, 10s);
    ASSERT_TRUE(testsupport::waitForWorkers(*client, 2, 10s).ok());
    std::vector<std::unique_ptr<client::Session>> sessions;
    for (int i = 0; i < 6; ++i) {
      // A benchmark each: cache affinity would gather one benchmark's
      // sessions on one host, and some must be on the host that is cut.
      sessions.push_back(
          client->startSession({"noop", fmt::format("benchmark://netbed/cut{}", i)}).value());
    }
    std::vector<std::pair<std::string, std::uint64_t>> onCutHost;
    for (const auto& session : sessions) {
      if (session->endpoint() == workerOn_[2]) {
        onCutHost.emplace_back(session->endpoint(), session->id().value);
      }
    }
    ASSERT_FALSE(onCutHost.empty()) << "no session was placed on host 2";
    // The first round in the cut waits for the client to give up on host 2
    // (ZMTP, 3 s) and restore its sessions on host 3.
    const StepTally tally = stepThroughACut(sessions, 2, 5s);

    expectNothingLostAndAllOnHost3(tally, *client, sessions, onCutHost.size());

    // Back on the network, host 2 registers again, holding none of the
    // sessions that moved, and refuses a late step to its old copy.
    ASSERT_TRUE(host2Back(*client, [](const auto& w) { return w.liveSessions == 0; }));
    Status late = bench::lateStep(onCutHost.front().first, onCutHost.front().second);
    EXPECT_EQ(late.code(), ErrorCode::kNotFound) << late.toString();
    EXPECT_NE(late.message().find("was dropped by this worker"), std::string::npos)
        << late.toString();
    std::printf(
        "worker host cut 5 s: steps attempted %llu, answered %llu, lost %llu; "
        "sessions restored %llu; late step: %s\n",
        static_cast<unsigned long long>(tally.attempted),
        static_cast<unsigned long long>(tally.answered),
        static_cast<unsigned long long>(tally.lost),
        static_cast<unsigned long long>(client->restoredSessions()),
        late.ok() ? "ANSWERED" : "refused");
  });
}

TEST_F(PartitionTest, WithTheCoordinatorCutOffClientsKeepSteppingOnTheWorkers) {
  startHosts("worker");
  onClientHost([&] {
    auto client = connectClient(coordinator_, {}, 10s);
    ASSERT_TRUE(testsupport::waitForWorkers(*client, 2, 10s).ok());
    std::vector<std::unique_ptr<client::Session>> sessions;
    for (int i = 0; i < 4; ++i) {
      sessions.push_back(client->startSession({"noop", "benchmark://netbed/coordinator"}).value());
    }
    const StepTally tally = stepThroughACut(sessions, kCoordinatorHost, 5s);
    EXPECT_EQ(tally.lost, 0u) << tally.firstLoss;
    EXPECT_GT(tally.answered, 100u);
    EXPECT_EQ(client->restoredSessions(), 0u) << "a worker that clients reach kept its sessions";
    // And the workers come back to the coordinator.
    EXPECT_TRUE(waitUntil(
        [&] {
          auto workers = client->listCluster();
          return workers.ok() && workers->size() == 2;
        },
        40s));
  });
}

TEST_F(PartitionTest, AnExperimentOverNestingHostsKeepsItsShareWhenOneIsCutOff) {
  startHosts("nest");
  onClientHost([&] {
    auto client = connectClient(coordinator_, "spread", 10s);
    ASSERT_TRUE(testsupport::waitForWorkers(*client, 2, 10s).ok());
    ExperimentSpec spec;
    spec.name = "spread";
    spec.workers = 2;
    spec.sessionTypes = {"noop"};
    auto opened = client->openExperiment(spec);
    ASSERT_TRUE(opened.ok()) << opened.status().toString();
    ASSERT_TRUE(client->waitForExperiment("spread", 2, 20s).ok());
    auto hostsOfWorkers = [&] {
      std::set<std::string> endpoints;
      auto status = client->experimentStatus("spread");
      if (!status.ok()) return endpoints;
      for (const auto& worker : status->workers) {
        if (worker.ready) endpoints.insert(worker.endpoint);
      }
      return endpoints;
    };
    ASSERT_EQ(hostsOfWorkers().size(), 2u) << "the experiment's workers are spread over the hosts";
    std::vector<std::unique_ptr<client::Session>> sessions;
    for (int i = 0; i < 4; ++i) {
      sessions.push_back(
          client->startSession({"noop", fmt::format("benchmark://netbed/spread{}", i)}).value());
    }
    std::vector<std::pair<std::uint64_t, bench::UnderlyingAddress>> onCutHost;
    for (const auto& session : sessions) {
      if (session->endpoint() == workerOn_[2]) {
        onCutHost.push_back({session->id().value, {session->target(), "spread", opened->key}});
      }
    }
    ASSERT_FALSE(onCutHost.empty()) << "no session was placed on host 2";
    const StepTally tally = stepThroughACut(sessions, 2, 5s, [&] {
      // The coordinator has declared host 2 lost and planned the
      // experiment's share on host 3: both its workers run there, ready.
      EXPECT_TRUE(waitUntil(
          [&] {
            auto status = client->experimentStatus("spread");
            return status.ok() && status->readyWorkers() == 2 &&
                   hostsOfWorkers() == std::set<std::string>{workerOn_[3]};
          },
          20s));
    });
    expectNothingLostAndAllOnHost3(tally, *client, sessions, onCutHost.size());

    // Host 2's old underlying worker is a stray until the coordinator
    // releases it, a lease later; meanwhile it has dropped the sessions that
    // moved and refuses a late step to one.
    ASSERT_TRUE(host2Back(*client, [](const auto&) { return true; }));
    const auto& [session, underlying] = onCutHost.front();
    Status late = bench::lateStep(workerOn_[2], session, underlying);
    EXPECT_EQ(late.code(), ErrorCode::kNotFound) << late.toString();
    EXPECT_NE(late.message().find("was dropped by this worker"), std::string::npos)
        << late.toString();
  });
}

}  // namespace
}  // namespace kiln::fault
