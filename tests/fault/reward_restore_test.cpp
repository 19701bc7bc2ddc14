// Restores nobody can see in a number: after a session is rebuilt elsewhere
// (its worker SIGKILLed), every reward and observation equals what the same
// episode gives without the restore, bit for bit, and the step says that a
// restore happened. First the case that was wrong (a reward after a restore
// counted the whole episode again), then the differential harness of `kiln
// bench chaos --episodes`, bounded, under every fault kind.
#include <gtest/gtest.h>
#include <signal.h>

#include "bench/chaos_bench.h"
#include "bench/differential_episodes.h"
#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"

namespace kiln::fault {
namespace {

const std::vector<std::string> kRewards{"Reward:IrInstructionCount", "Reward:IrInstructionCountOz",
                                        "Reward:ObjectTextSizeBytes", "Reward:ObjectTextSizeOz",
                                        "IrInstructionCount"};

struct Episode {
  std::vector<std::vector<Value>> observed;  // per step: kRewards' values, or none
  std::uint32_t restores = 0;
  bool lastStepSaidRestored = false;
};

// sroa, then mem2reg without asking for anything, then gvn, on bfs; with
// `kill`, the session's worker is SIGKILLed before gvn.
Episode runEpisode(client::Client& client, testsupport::ChildCluster& children,
                   const std::vector<testsupport::ChildProcess*>& workers, bool kill) {
  Episode episode;
  client::SessionOptions options = llvmSession("benchmark://kiln-bench-v0/bfs");
  options.observations = kRewards;
  auto session = client.startSession(options).value();
  episode.observed.push_back(session->initialObservations());
  auto sroa = session->step({passAction(*session, "sroa")}, kRewards);
  EXPECT_TRUE(sroa.ok()) << sroa.status().toString();
  if (sroa.ok()) episode.observed.push_back(sroa->observations);
  EXPECT_TRUE(session->step({passAction(*session, "mem2reg")}, std::vector<std::string>{}).ok());
  if (kill) {
    for (auto* worker : workers) {
      if (worker->endpoint == session->endpoint()) ::kill(worker->process.pid(), SIGKILL);
    }
  }
  auto gvn = session->step({passAction(*session, "gvn")}, kRewards);
  EXPECT_TRUE(gvn.ok()) << gvn.status().toString();
  if (gvn.ok()) {
    episode.observed.push_back(gvn->observations);
    episode.lastStepSaidRestored = gvn->restored;
  }
  episode.restores = session->restores();
  return episode;
}

TEST(RewardRestore, RewardsAfterAWorkerKillEqualThoseOfTheQuietEpisode) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  std::vector<testsupport::ChildProcess*> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(children
                          .spawn({"worker", "--coordinator", coordinator.endpoint(),
                                  "--heartbeat-seconds", "0.1", "--log-level", "off"})
                          .value());
  }
  auto client = connectClient(coordinator.endpoint());
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 3; }, 10s));

  const Episode quiet = runEpisode(*client, children, workers, false);
  const Episode restored = runEpisode(*client, children, workers, true);
  EXPECT_EQ(quiet.restores, 0u);
  EXPECT_FALSE(quiet.lastStepSaidRestored);
  EXPECT_EQ(restored.restores, 1u);
  EXPECT_TRUE(restored.lastStepSaidRestored);
  ASSERT_EQ(quiet.observed.size(), 3u);
  ASSERT_EQ(restored.observed.size(), 3u);
  for (std::size_t step = 0; step < 3; ++step) {
    for (std::size_t i = 0; i < kRewards.size(); ++i) {
      EXPECT_EQ(quiet.observed[step][i], restored.observed[step][i])
          << kRewards[i] << " at step " << step << ": quiet " << quiet.observed[step][i].describe()
          << ", restored " << restored.observed[step][i].describe();
    }
  }
  // gvn's own drop (mem2reg's included: it was not asked for), not the
  // whole episode's: the count before sroa minus the count after gvn is
  // sroa's reward plus gvn's.
  const auto count = [&](std::size_t step) { return quiet.observed[step][4].as<std::int64_t>(); };
  EXPECT_EQ(restored.observed[2][0].as<double>(), static_cast<double>(count(1) - count(2)));
}

bench::ChaosOptions harness(const std::string& type, const std::string& fault, unsigned episodes) {
  bench::ChaosOptions options;
  options.cluster.kiln = KILN_BINARY;
  options.sessionType = type;
  options.fault = fault;
  options.episodes = episodes;
  options.episodeLength = 6;
  options.sessions = 6;
  options.cluster.workers = 3;
  options.seed = 7;
  options.cluster.minPauseSeconds = 0.4;
  options.cluster.maxPauseSeconds = 0.8;
  // Longer than the ZMTP heartbeat timeout (3 s): the client drops the
  // connection and restores; a shorter outage only delays the steps.
  options.cluster.outageSeconds = 4.0;
  options.cluster.crasherModule = KILN_CRASHER_IR;
  // Noop steps of 20 ms: the run lasts seconds, so that faults land in it.
  options.busyMicros = 20000;
  return options;
}

// `restores`: the fault must have made at least one session be restored
// (a coordinator restart need not).
void expectNoMismatch(const bench::ChaosOptions& options, bool restores = true) {
  bench::ChaosFigures figures;
  auto report = bench::runChaosBench(options, &figures);
  if (report.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << "this machine cannot make the namespace bed: " << report.status().toString();
  }
  ASSERT_TRUE(report.ok()) << report.status().toString();
  std::string notes;
  for (const std::string& note : report->notes) notes += note + "\n";
  EXPECT_EQ(figures.episodes, options.episodes) << notes;
  EXPECT_GE(figures.kills, 1u) << "no fault was injected: " << notes;
  EXPECT_EQ(figures.rewardMismatches, 0u) << notes;
  EXPECT_EQ(figures.observationMismatches, 0u) << notes;
  EXPECT_EQ(figures.outcomeMismatches, 0u) << notes;
  EXPECT_GT(figures.comparedValues, 0u) << notes;
  if (restores) EXPECT_GE(figures.restored, 1u) << "the fault restored no session: " << notes;
}

// An llvm worker takes seconds to come back on a loaded machine: faults at
// the noop pace downed all three at once and sessions waited out the
// user's deadline (lost, not wrong). Faults half as often, and a deadline
// that outlasts a restart, keep the run about the numbers.
bench::ChaosOptions llvmHarness(const std::string& fault) {
  bench::ChaosOptions options = harness("llvm", fault, 36);
  options.cluster.minPauseSeconds = 1.0;
  options.cluster.maxPauseSeconds = 2.0;
  options.cluster.requestSeconds = 30;
  return options;
}

TEST(RewardRestore, DifferentialHarnessLlvmUnderWorkerKills) {
  expectNoMismatch(llvmHarness("kill"));
}

TEST(RewardRestore, DifferentialHarnessLlvmUnderANeighboursLlvmCrash) {
  expectNoMismatch(llvmHarness("crash"));
}

TEST(RewardRestore, DifferentialHarnessNoopUnderCoordinatorRestarts) {
  expectNoMismatch(harness("noop", "coordinator", 120), /*restores=*/false);
}

TEST(RewardRestore, DifferentialHarnessNoopUnderFrozenWorkers) {
  // A frozen worker's connections drop only once ZMTP heartbeats go
  // unanswered for their timeout after the freeze began.
  bench::ChaosOptions options = harness("noop", "freeze", 120);
  options.cluster.outageSeconds = 6.0;
  expectNoMismatch(options);
}

TEST(RewardRestore, DifferentialHarnessNoopUnderPartitions) {
  // Each host on a network namespace of its own; skipped where the machine
  // cannot make them (not root).
  bench::ChaosOptions options = harness("noop", "partition", 120);
  options.cluster.netbed = KILN_NETBED;
  options.cluster.outageSeconds = 6.0;  // as for a freeze: past the ZMTP heartbeat timeout
  expectNoMismatch(options);
}

TEST(RewardRestore, DifferentialHarnessNoopUnderKilledNestChildren) {
  // The experiment's only child is started again by its host before the
  // next kill, and restores may wait for it (a user's default deadline is
  // 60 s): killed faster than it comes back, sessions are lost instead
  // (docs/faults.md, open).
  bench::ChaosOptions options = harness("noop", "nest-child", 120);
  options.cluster.minPauseSeconds = 3;
  options.cluster.maxPauseSeconds = 4;
  options.cluster.requestSeconds = 30;
  expectNoMismatch(options);
}

}  // namespace
}  // namespace kiln::fault
