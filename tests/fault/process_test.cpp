// Faults of whole processes, with real `kiln` child processes and real
// signals: a worker SIGKILLed while sessions step (they are restored and no
// step fails), a step that hangs (it times out and the worker keeps its
// slots), a worker whose loop hangs (given up after one timeout), and a
// coordinator killed and started again on the same port
// (sessions keep stepping; hosts re-register; experiments are re-opened
// and adopt their workers), and a worker that caught a real LLVM crash
// (it answers, exits to be restarted, its other sessions are restored).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/base/exit_codes.h"
#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"

namespace kiln::fault {
namespace {

// The crasher module lives in the source tree, outside the test's directory.
const std::string kCrasherDir = std::filesystem::path(KILN_CRASHER_IR).parent_path().string();

std::vector<std::string> workerArgs(const std::string& coordinator,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "worker", "--coordinator", coordinator, "--heartbeat-seconds",     "0.1", "--log-level",
      "off",    "--allow-files", kCrasherDir, "--enable-fault-injection"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(ProcessFaults, WorkerSigkilledWhileSessionsStepLosesNoStep) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  std::vector<testsupport::ChildProcess*> workers;
  for (int i = 0; i < 3; ++i)
    workers.push_back(children.spawn(workerArgs(coordinator.endpoint())).value());
  auto client = connectClient(coordinator.endpoint());
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 3; }, 10s));

  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < 6; ++i)
    sessions.push_back(client->startSession({"noop", "benchmark://f/k"}).value());
  std::vector<std::int64_t> expected(sessions.size(), 0);
  pid_t doomed = 0;
  const std::string doomedEndpoint = sessions[0]->endpoint();
  for (auto* worker : workers) {
    if (worker->endpoint == doomedEndpoint) doomed = worker->process.pid();
  }
  ASSERT_NE(doomed, 0);
  for (int round = 0; round < 30; ++round) {
    if (round == 10) ::kill(doomed, SIGKILL);
    // Pipelined: every session has a step in flight when the worker dies.
    std::vector<std::uint64_t> sent;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      std::int64_t action = (round + static_cast<int>(i)) % 7;
      expected[i] += action;
      sent.push_back(sessions[i]->sendStep({Value(action)}, {0}).value());
    }
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      auto stepped = sessions[i]->awaitStep(sent[i]);
      ASSERT_TRUE(stepped.ok()) << "round " << round << ": " << stepped.status().toString();
      EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), expected[i]);
    }
  }
  EXPECT_GE(client->restoredSessions(), 1u);
  for (auto& session : sessions) EXPECT_NE(session->endpoint(), doomedEndpoint);
}

TEST(ProcessFaults, AWorkerThatCaughtAnLlvmCrashAnswersExitsAndItsSessionsAreRestored) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto* damaged = children.spawn(workerArgs(coordinator.endpoint())).value();
  auto client = connectClient(coordinator.endpoint(), {}, 30s);
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 1; }, 10s));
  // LLVM 19's loop-bound-split dies with SIGSEGV on this module (opt-19 too).
  auto crasher = client->startSession(llvmSession("file://" KILN_CRASHER_IR)).value();
  auto bystander = client->startSession(llvmSession("benchmark://kiln-bench-v0/crc32")).value();
  const std::vector<std::string> count{"IrInstructionCount"};
  ASSERT_TRUE(bystander->step({passAction(*bystander, "mem2reg")}, count).ok());
  auto* survivor = children.spawn(workerArgs(coordinator.endpoint())).value();
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 2; }, 10s));

  auto crashed = crasher->step({passAction(*crasher, "loop-bound-split")}, count);
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), ErrorCode::kCompileError) << crashed.status().toString();
  EXPECT_NE(crashed.status().message().find("signal 11"), std::string::npos)
      << crashed.status().toString();
  // Its memory can no longer be trusted: it stops by itself, asking to be
  // started again.
  std::optional<ExitStatus> exit;
  ASSERT_TRUE(waitUntil([&] { return (exit = damaged->process.poll()).has_value(); }, 30s));
  EXPECT_FALSE(exit->signaled()) << exit->describe();
  EXPECT_EQ(exit->exitCode, kExitRestartAfterCaughtCrash) << exit->describe();

  // The other session on it is restored on the survivor by replay and steps
  // on exactly as a session that never moved.
  auto moved = bystander->step({passAction(*bystander, "gvn")}, count);
  ASSERT_TRUE(moved.ok()) << moved.status().toString();
  EXPECT_EQ(bystander->endpoint(), survivor->endpoint);
  EXPECT_GE(bystander->restores(), 1u);
  EXPECT_EQ(moved->observations.at(0).as<std::int64_t>(),
            instructionCountAfter(*client, "benchmark://kiln-bench-v0/crc32", {"mem2reg", "gvn"}));
  // The survivor caught nothing and keeps serving.
  EXPECT_FALSE(survivor->process.poll().has_value());
}

TEST(ProcessFaults, ASessionOnAUsersInlineProgramIsRestoredFromItsOwnBytes) {
  // A user's program (kiln.make_benchmark) reaches the worker only inline:
  // the worker that takes over has never seen it, so the restore must send
  // the bytes again, and the replayed module must be the same.
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto* doomed = children.spawn(workerArgs(coordinator.endpoint())).value();
  auto client = connectClient(coordinator.endpoint(), {}, 30s);
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 1; }, 10s));
  const std::string program = R"(
define i32 @f(i32 %n) {
entry:
  %p = alloca i32
  store i32 %n, ptr %p
  %v = load i32, ptr %p
  %a = add i32 %v, 1
  %b = add i32 %a, 1
  ret i32 %b
}
)";
  client::SessionOptions options = llvmSession("benchmark://user-v0/two-adds-0123456789abcdef");
  options.program = program;
  const std::vector<std::string> count{"IrInstructionCount"};
  auto reference = client->startSession(options).value();
  auto mem2reg = reference->step({passAction(*reference, "mem2reg")}, count);
  ASSERT_TRUE(mem2reg.ok()) << mem2reg.status().toString();
  auto combined = reference->step({passAction(*reference, "instcombine")}, count);
  ASSERT_TRUE(combined.ok()) << combined.status().toString();
  ASSERT_TRUE(reference->end().ok());

  auto session = client->startSession(options).value();
  ASSERT_TRUE(session->step({passAction(*session, "mem2reg")}, count).ok());
  auto* survivor = children.spawn(workerArgs(coordinator.endpoint())).value();
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 2; }, 10s));
  ::kill(doomed->process.pid(), SIGKILL);

  auto moved = session->step({passAction(*session, "instcombine")}, count);
  ASSERT_TRUE(moved.ok()) << moved.status().toString();
  EXPECT_EQ(session->endpoint(), survivor->endpoint);
  EXPECT_GE(session->restores(), 1u);
  EXPECT_EQ(moved->observations.at(0).as<std::int64_t>(),
            combined->observations.at(0).as<std::int64_t>());
}

TEST(ProcessFaults, HangingStepTimesOutAndThePlainWorkerKeepsItsSlot) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto* worker =
      children.spawn(workerArgs(coordinator.endpoint(), {"--slots", "1", "--stuck-seconds", "0.5"}))
          .value();
  auto client = connectClient(coordinator.endpoint(), {}, 5s);
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 1; }, 10s));

  client::SessionOptions hangs{"noop", "benchmark://f/hang"};
  hangs.timeout = 300ms;
  auto stuck = client->startSession(hangs).value();
  auto cancellable = client->startSession(hangs).value();
  auto healthy = client->startSession({"noop", "benchmark://f/ok"}).value();
  // No warm-up steps: a session's first steps always run on the pool (later
  // cheap ones may run on the loop thread, see docs/faults.md).

  // A step that honours cancel(): it times out and frees its slot at once.
  ASSERT_TRUE(cancellable->setParameter("noop.hang_on_step", "until_cancelled").ok());
  auto cancelled = cancellable->step({Value(std::int64_t{1})}, std::vector<std::string>{});
  EXPECT_EQ(cancelled.status().code(), ErrorCode::kTimeout) << cancelled.status().toString();
  auto stepped = healthy->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();

  // A step that ignores cancel() holds the only thread: it is replaced.
  ASSERT_TRUE(stuck->setParameter("noop.hang_on_step", "forever").ok());
  auto started = std::chrono::steady_clock::now();
  auto hung = stuck->step({Value(std::int64_t{1})}, std::vector<std::string>{});
  EXPECT_EQ(hung.status().code(), ErrorCode::kTimeout) << hung.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
  for (int i = 0; i < 5; ++i) {
    stepped = healthy->step({Value(std::int64_t{2})}, std::vector<std::string>{"Sum"});
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  }
  EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 12);
  auto fresh = client->startSession({"noop", "benchmark://f/new"});
  ASSERT_TRUE(fresh.ok()) << fresh.status().toString();
  EXPECT_TRUE((*fresh)->step({Value(std::int64_t{3})}, std::vector<std::string>{}).ok());
  EXPECT_FALSE(worker->process.poll().has_value()) << "the worker died";
}

unsigned threadsOf(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:")) return static_cast<unsigned>(std::stoul(line.substr(8)));
  }
  return 0;
}

// Steps that never return must not grow a worker's threads without bound:
// it replaces at most --slots stuck threads at a time. Past that, with every
// slot held, it refuses new work with the reason, and logs it.
TEST(ProcessFaults, StuckStepsPastTheCapHoldTheirSlotAndTheWorkerSaysSo) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto* worker = children
                     .spawn({"worker", "--coordinator", coordinator.endpoint(),
                             "--heartbeat-seconds", "0.1", "--log-level", "warn", "--slots", "1",
                             "--stuck-seconds", "0.3", "--enable-fault-injection"})
                     .value();
  auto client = connectClient(coordinator.endpoint(), {}, 5s);
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 1; }, 10s));
  client::SessionOptions hangs{"noop", "benchmark://f/hang"};
  hangs.timeout = 300ms;
  std::vector<std::unique_ptr<client::Session>> stuck;
  for (int i = 0; i < 2; ++i)
    stuck.push_back(client->startSessionOn(worker->endpoint, hangs).value());
  const unsigned threadsBefore = threadsOf(worker->process.pid());
  ASSERT_GT(threadsBefore, 0u);

  for (auto& session : stuck) {
    ASSERT_TRUE(session->setParameter("noop.hang_on_step", "forever").ok());
  }
  // The first hang is replaced (the one written-off thread allowed); the
  // second holds the only slot.
  for (auto& session : stuck) {
    auto hung = session->step({Value(std::int64_t{1})}, std::vector<std::string>{});
    EXPECT_EQ(hung.status().code(), ErrorCode::kTimeout) << hung.status().toString();
    std::this_thread::sleep_for(600ms);  // past --stuck-seconds
  }
  Status refused = okStatus();
  ASSERT_TRUE(waitUntil(
      [&] {
        auto fresh = client->startSessionOn(worker->endpoint, {"noop", "benchmark://f/new"});
        refused = fresh.ok() ? okStatus() : fresh.status();
        return refused.code() == ErrorCode::kOverloaded;
      },
      5s))
      << refused.toString();
  EXPECT_NE(refused.message().find("compile threads are stuck"), std::string::npos)
      << refused.toString();
  // One thread more than before at most: the replacement of the first hang.
  EXPECT_LE(threadsOf(worker->process.pid()), threadsBefore + 1);
  std::ifstream log(worker->stderrPath);
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("compile threads are stuck in steps that ignore cancellation"),
            std::string::npos)
      << text;
  EXPECT_FALSE(worker->process.poll().has_value()) << "the worker died";
}

// A worker whose loop thread is stuck (a cheap session's step runs inline,
// then hangs) keeps its connections up, because ZeroMQ's own thread still
// answers heartbeats; only the coordinator notices (no heartbeat). After one
// timeout the client learns from the coordinator that the worker is gone:
// its other sessions are restored at once instead of each waiting out a
// timeout, and ending a session there returns promptly.
TEST(ProcessFaults, WorkerWithAStuckLoopIsGivenUpAfterOneTimeout) {
  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  // Its cheap steps run on its loop thread however loaded the machine is
  // (a noop step can miss the default budget, 60 us, under load: the hang
  // then takes a pool thread and the loop keeps serving).
  auto* stuckWorker =
      children.spawn(workerArgs(coordinator.endpoint(), {"--inline-step-us", "1000000"})).value();
  auto* survivor = children.spawn(workerArgs(coordinator.endpoint())).value();
  const Duration timeout = 2s;
  auto client = connectClient(coordinator.endpoint(), {}, timeout);
  ASSERT_TRUE(waitUntil([&] { return client->listCluster()->size() == 2; }, 10s));

  std::vector<std::unique_ptr<client::Session>> sessions;  // [0] hangs, [1] and [2] are innocent
  for (int i = 0; i < 3; ++i) {
    sessions.push_back(
        client->startSessionOn(stuckWorker->endpoint, {"noop", "benchmark://f/stuck"}).value());
  }
  std::vector<std::int64_t> sums(sessions.size(), 0);
  for (int round = 0; round < 4; ++round) {  // cheap steps: later ones may run inline
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      ASSERT_TRUE(sessions[i]->step({Value(std::int64_t{3})}, std::vector<std::string>{}).ok());
      sums[i] += 3;
    }
  }
  ASSERT_TRUE(sessions[0]->setParameter("noop.hang_on_step", "forever").ok());
  // The pool thread that set it counts itself idle just after its answer
  // left; a step that arrives before that runs on the pool, not the loop
  // (seen on a loaded machine over a direct channel, which answers sooner).
  std::this_thread::sleep_for(50ms);

  auto sentAt = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> sent;
  for (auto& session : sessions)
    sent.push_back(session->sendStep({Value(std::int64_t{1})}, {0}).value());
  // The hanging step is never awaited: its restore would replay the hang.
  for (std::size_t i = 1; i < sessions.size(); ++i) {
    auto stepped = sessions[i]->awaitStep(sent[i]);
    ASSERT_TRUE(stepped.ok()) << "session " << i << ": " << stepped.status().toString();
    EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), sums[i] + 1);
    EXPECT_EQ(sessions[i]->endpoint(), survivor->endpoint);
  }
  // One timeout for all of them, not one each (generous for a loaded machine).
  EXPECT_LT(std::chrono::steady_clock::now() - sentAt, 2 * timeout + 1s);
  EXPECT_FALSE(stuckWorker->process.poll().has_value()) << "the worker died rather than hung";

  auto endedAt = std::chrono::steady_clock::now();
  EXPECT_TRUE(sessions[0]->end().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - endedAt, timeout / 2)
      << "ending a session on a worker known to be gone waited for it";
  auto fresh = client->startSession({"noop", "benchmark://f/new"});
  ASSERT_TRUE(fresh.ok()) << fresh.status().toString();
  EXPECT_EQ((*fresh)->endpoint(), survivor->endpoint);
}

TEST(ProcessFaults, CoordinatorRestartKeepsSessionsSteppingAndExperimentsReopened) {
  std::string endpoint = fmt::format("tcp://127.0.0.1:{}", freePort());
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  std::vector<std::string> coordinatorArgs{
      "coordinator", "--listen", endpoint, "--heartbeat-seconds", "0.1", "--log-level", "off"};
  auto* first = children.spawn(coordinatorArgs).value();
  children.spawn(workerArgs(endpoint)).value();
  children
      .spawn(
          {"nest", "--coordinator", endpoint, "--heartbeat-seconds", "0.1", "--log-level", "off"})
      .value();
  auto plain = connectClient(endpoint, {}, 3s);
  auto tenant = connectClient(endpoint, "gamma", 3s);
  ExperimentSpec spec;
  spec.name = "gamma";
  spec.workers = 1;
  ASSERT_TRUE(tenant->openExperiment(spec).ok());
  ASSERT_TRUE(tenant->waitForExperiment("gamma", 1, 10s).ok());
  auto a = plain->startSession({"noop", "benchmark://f/a"}).value();
  auto b = tenant->startSession({"noop", "benchmark://f/b"}).value();
  std::uint64_t oldWorker = b->target();

  ::kill(first->process.pid(), SIGKILL);
  // The step path does not go through the coordinator.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(a->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok()) << i;
    ASSERT_TRUE(b->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok()) << i;
    std::this_thread::sleep_for(20ms);
  }
  auto restartedAt = std::chrono::steady_clock::now();
  children.spawn(coordinatorArgs).value();
  // Hosts notice the silence, re-register with back-off (1 s, 2 s, ...).
  ASSERT_TRUE(waitUntil(
      [&] {
        auto workers = plain->listCluster();
        return workers.ok() && workers->size() == 2;
      },
      15s));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - restartedAt).count();
  EXPECT_LT(seconds, 10.0);
  // The new coordinator does not know "gamma": placing a session makes the
  // client open it again, and the host's existing worker (reported when the
  // host re-registered) is adopted rather than replaced.
  auto c = tenant->startSession({"noop", "benchmark://f/c"});
  ASSERT_TRUE(c.ok()) << c.status().toString();
  auto gamma = tenant->experimentStatus("gamma");
  ASSERT_TRUE(gamma.ok()) << gamma.status().toString();
  bool adopted = std::any_of(gamma->workers.begin(), gamma->workers.end(),
                             [&](const auto& w) { return w.workerId == oldWorker; });
  EXPECT_TRUE(adopted) << "the re-opened experiment planned a new worker instead of adopting";
  EXPECT_EQ(b->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"})
                ->observations[0]
                .as<std::int64_t>(),
            21);
  EXPECT_EQ(b->restores(), 0u);
  EXPECT_EQ(a->restores(), 0u);
}

}  // namespace
}  // namespace kiln::fault
