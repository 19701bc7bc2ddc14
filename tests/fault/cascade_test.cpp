// Restores that meet more failures, with real `kiln` processes and SIGKILL:
// the worker replaying a restored session killed too (twice in a row), dead
// workers the coordinator still lists, workers started again at the
// endpoints they had, and the coordinator killed while a restore needs it.
// Each time the session must come back with its exact state, within its
// request's deadline.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <set>

#include "common/base/cpu_time.h"
#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"

namespace kiln::fault {
namespace {

std::vector<std::string> workerArgs(const std::string& coordinator,
                                    const std::string& listen = "tcp://127.0.0.1:0") {
  return {"worker", "--coordinator", coordinator, "--heartbeat-seconds", "0.1", "--listen",
          listen,   "--log-level",   "off"};
}

const std::vector<std::string> kSum{"Sum"};

Value one() { return Value(std::int64_t{1}); }

// `count` workers of the coordinator at `coordinator`, each on its own port.
std::vector<testsupport::ChildProcess*> startWorkers(testsupport::ChildCluster& children,
                                                     const std::string& coordinator,
                                                     unsigned count) {
  std::vector<testsupport::ChildProcess*> workers;
  for (unsigned i = 0; i < count; ++i) {
    workers.push_back(children.spawn(workerArgs(coordinator)).value());
  }
  return workers;
}

pid_t pidAt(const std::vector<testsupport::ChildProcess*>& workers, const std::string& endpoint) {
  for (auto* worker : workers) {
    if (worker->endpoint == endpoint) return worker->process.pid();
  }
  return 0;
}

// The worker (not yet killed) that burns CPU: the one replaying the
// session, whose every step spins for noop.busy_us.
pid_t replayingWorker(const std::vector<testsupport::ChildProcess*>& workers,
                      const std::set<pid_t>& killed, Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<std::pair<pid_t, double>> before;
    for (auto* worker : workers) {
      const pid_t pid = worker->process.pid();
      if (!killed.contains(pid)) before.emplace_back(pid, processCpuSeconds(pid));
    }
    std::this_thread::sleep_for(100ms);
    for (const auto& [pid, cpu] : before) {
      if (processCpuSeconds(pid) - cpu > 0.04) return pid;
    }
  }
  return 0;
}

// A noop session whose replay takes about `steps` x 20 ms of one worker's CPU.
std::unique_ptr<client::Session> slowToReplay(client::Client& client, int steps) {
  auto session = client.startSession({"noop", "benchmark://cascade/slow"}).value();
  EXPECT_TRUE(session->setParameter("noop.busy_us", "20000").ok());
  std::vector<std::uint64_t> sent;
  for (int i = 0; i < steps; ++i) sent.push_back(session->sendStep({one()}, {}).value());
  for (std::uint64_t id : sent) EXPECT_TRUE(session->awaitStep(id).ok());
  return session;
}

TEST(Cascades, TwoWorkersKilledInTurnWhileReplayingOneRestoreLoseNoStep) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto workers = startWorkers(children, coordinator.endpoint(), 4);
  auto client = connectClient(coordinator.endpoint(), {}, 30s);
  ASSERT_TRUE(testsupport::waitForWorkers(*client, 4, 10s).ok());
  constexpr int kHistory = 100;
  auto session = slowToReplay(*client, kHistory);
  std::set<pid_t> killed{pidAt(workers, session->endpoint())};
  ::kill(*killed.begin(), SIGKILL);

  // The step finds its worker gone and restores the session; each worker
  // the replay lands on is killed in the middle of it.
  auto stepped = std::async(std::launch::async, [&] { return session->step({one()}, kSum); });
  for (int kill = 0; kill < 2; ++kill) {
    const pid_t replaying = replayingWorker(workers, killed, 15s);
    ASSERT_NE(replaying, 0) << "no worker started replaying the session";
    std::this_thread::sleep_for(300ms);  // of a replay that takes about 2 s
    ::kill(replaying, SIGKILL);
    killed.insert(replaying);
  }
  auto result = stepped.get();
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->observations.at(0).as<std::int64_t>(), kHistory + 1);
  EXPECT_EQ(session->restores(), 1u) << "one restore, whatever it took";
  EXPECT_FALSE(killed.contains(pidAt(workers, session->endpoint())));
}

TEST(Cascades, ARestoreSkipsDeadWorkersTheCoordinatorStillLists) {
  // 1 s heartbeats: a dead worker stays listed for 3 s, and the restore is
  // placed on one first (ids break the tie between equal loads).
  InProcessCoordinator coordinator(1s);
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto workers = startWorkers(children, coordinator.endpoint(), 3);
  auto client = connectClient(coordinator.endpoint(), {}, 10s);
  ASSERT_TRUE(testsupport::waitForWorkers(*client, 3, 10s).ok());
  auto listed = client->listCluster().value();
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.workerId < b.workerId; });
  const std::string survivor = listed.back().endpoint;
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(
        client->startSession({"noop", fmt::format("benchmark://cascade/listed{}", i)}).value());
    ASSERT_TRUE(sessions.back()->step({one()}, std::vector<std::uint32_t>{}).ok());
  }
  for (int i = 0; i < 2; ++i) ::kill(pidAt(workers, listed[i].endpoint), SIGKILL);

  const auto started = std::chrono::steady_clock::now();
  for (auto& session : sessions) {
    auto result = session->step({one()}, kSum);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_EQ(result->observations.at(0).as<std::int64_t>(), 2);
    EXPECT_EQ(session->endpoint(), survivor);
  }
  // No request waited out a timeout on a dead worker.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(Cascades, WorkersStartedAgainAtTheirEndpointsTakeTheRestoredSessions) {
  InProcessCoordinator coordinator(1s);
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  std::vector<std::vector<std::string>> args;
  std::vector<testsupport::ChildProcess*> workers;
  for (int i = 0; i < 2; ++i) {
    args.push_back(
        workerArgs(coordinator.endpoint(), fmt::format("tcp://127.0.0.1:{}", freePort())));
    workers.push_back(children.spawn(args.back()).value());
  }
  auto client = connectClient(coordinator.endpoint(), {}, 10s);
  ASSERT_TRUE(testsupport::waitForWorkers(*client, 2, 10s).ok());
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < 2; ++i) {
    sessions.push_back(
        client->startSession({"noop", fmt::format("benchmark://cascade/again{}", i)}).value());
    ASSERT_TRUE(sessions.back()->step({one()}, std::vector<std::uint32_t>{}).ok());
  }
  ASSERT_NE(sessions[0]->endpoint(), sessions[1]->endpoint());

  // Every worker dies and is started again where it was: the restores have
  // only the replacements, at the endpoints the client saw die.
  std::set<std::uint32_t> replacements;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    ::kill(workers[i]->process.pid(), SIGKILL);
    children.retire(workers[i]);
    workers[i] = children.spawn(args[i]).value();
    replacements.insert(static_cast<std::uint32_t>(workers[i]->process.pid()));
  }
  // A registration at a listed endpoint replaces its dead predecessor at
  // once, not a liveness window (3 s) later.
  ASSERT_TRUE(waitUntil(
      [&] {
        auto now = client->listCluster();
        if (!now.ok() || now->size() != 2) return false;
        return std::all_of(now->begin(), now->end(),
                           [&](const auto& w) { return replacements.contains(w.pid); });
      },
      2s));
  for (auto& session : sessions) {
    auto result = session->step({one()}, kSum);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_EQ(result->observations.at(0).as<std::int64_t>(), 2);
    EXPECT_EQ(session->restores(), 1u);
  }
}

TEST(Cascades, ARestoreWaitsForACoordinatorKilledAndStartedAgain) {
  const std::string endpoint = fmt::format("tcp://127.0.0.1:{}", freePort());
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  const std::vector<std::string> coordinatorArgs{
      "coordinator", "--listen", endpoint, "--heartbeat-seconds", "0.1", "--log-level", "off"};
  auto* coordinator = children.spawn(coordinatorArgs).value();
  auto workers = startWorkers(children, endpoint, 2);
  auto client = connectClient(endpoint, {}, 15s);
  ASSERT_TRUE(testsupport::waitForWorkers(*client, 2, 10s).ok());
  auto session = client->startSession({"noop", "benchmark://cascade/coordinator"}).value();
  ASSERT_TRUE(session->step({one()}, std::vector<std::uint32_t>{}).ok());

  ::kill(coordinator->process.pid(), SIGKILL);
  ::kill(pidAt(workers, session->endpoint()), SIGKILL);
  // The restore cannot be placed while the coordinator is down: it waits,
  // within the step's deadline, for the coordinator and the surviving
  // worker's registration with it.
  auto stepped = std::async(std::launch::async, [&] { return session->step({one()}, kSum); });
  std::this_thread::sleep_for(1500ms);
  children.retire(coordinator);
  ASSERT_TRUE(children.spawn(coordinatorArgs).ok());
  auto result = stepped.get();
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->observations.at(0).as<std::int64_t>(), 2);
  EXPECT_EQ(session->restores(), 1u);
}

}  // namespace
}  // namespace kiln::fault
