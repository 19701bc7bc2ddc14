// Clean stops (issue 48): every serving command, and a worker built from the
// kit with runWorker<...>(), run as real processes with TMPDIR set to a
// fresh directory. SIGTERM or SIGINT drains them: exit 0, the contexts'
// shutdown ran, nothing left in TMPDIR. A running request is answered and a
// new one refused with the reason; a second signal stops at once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/base/exit_codes.h"
#include "common/process/subprocess.h"
#include "tests/fault/fault_support.h"
#include "tests/support/scratch_dir.h"

namespace kiln::fault {
namespace {

namespace fs = std::filesystem;

std::string readAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> leftIn(const fs::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// One serving process with TMPDIR = a directory of its own, ready once its
// first line of output is there.
struct Served {
  testsupport::ScratchDir scratch{"kiln-stop-test"};
  fs::path tmp = scratch.path() / "tmp";
  fs::path out = scratch.path() / "out";
  fs::path err = scratch.path() / "err";
  std::optional<Subprocess> process;
  std::string firstLine;

  explicit Served(std::vector<std::string> command) {
    fs::create_directories(tmp);
    command.insert(command.begin(), {"env", "TMPDIR=" + tmp.string()});
    SubprocessOptions options;
    options.stdoutPath = out;
    options.stderrPath = err;
    auto spawned = Subprocess::spawn(command, options);
    EXPECT_TRUE(spawned.ok()) << spawned.status().toString();
    if (!spawned.ok()) return;
    process.emplace(std::move(spawned).value());
    EXPECT_TRUE(waitUntil(
        [&] {
          firstLine = readAll(out);
          return firstLine.find('\n') != std::string::npos || process->poll().has_value();
        },
        60s))
        << "no first line from " << command[2];
    firstLine = firstLine.substr(0, firstLine.find('\n'));
  }
  // The endpoint the first line names ("worker tcp://...").
  std::string endpoint() const {
    const auto at = firstLine.find("tcp://");
    return at == std::string::npos ? std::string()
                                   : firstLine.substr(at, firstLine.find_first_of(" ,;", at) - at);
  }
  // Sends `signal` and waits up to `within` for the exit.
  std::optional<ExitStatus> stop(int signal, Duration within) {
    ::kill(process->pid(), signal);
    std::optional<ExitStatus> status;
    waitUntil([&] { return (status = process->poll()).has_value(); }, within);
    return status;
  }
};

// `hookLine`: what the log says once the contexts' shutdown ran. A process
// with a working directory (every one but the coordinator) has made it by
// the time it serves: gone after the stop.
void expectCleanStop(std::vector<std::string> command, int signal, const std::string& hookLine,
                     bool workingDirectory = true) {
  SCOPED_TRACE(command[0] + " " + command[1]);
  Served served(command);
  ASSERT_TRUE(served.process && served.process->running()) << readAll(served.err);
  EXPECT_EQ(fs::is_empty(served.tmp), !workingDirectory);
  const auto status = served.stop(signal, 20s);
  ASSERT_TRUE(status.has_value()) << "still running 20 s after the signal";
  EXPECT_EQ(status->exitCode, 0) << status->describe() << "\n" << readAll(served.err);
  EXPECT_NE(readAll(served.err).find(hookLine), std::string::npos) << readAll(served.err);
  EXPECT_TRUE(fs::is_empty(served.tmp))
      << "left in TMPDIR: " << ::testing::PrintToString(leftIn(served.tmp));
}

TEST(CleanStop, EveryServingCommandDrainsOnSigterm) {
  const std::string kiln = KILN_BINARY;
  expectCleanStop({kiln, "coordinator", "--listen", "tcp://127.0.0.1:0"}, SIGTERM, "stopped",
                  false);
  expectCleanStop({kiln, "worker", "--listen", "tcp://127.0.0.1:0"}, SIGTERM, "stopped");
  expectCleanStop({kiln, "nest", "--listen", "tcp://127.0.0.1:0"}, SIGTERM, "stopped");
  expectCleanStop({kiln, "local", "--listen", "tcp://127.0.0.1:0", "--workers", "1"}, SIGTERM,
                  "stopped");
}

// The kit's runWorker<...>() with a context whose shutdown() logs what it
// served: the hook ran, on SIGTERM and on SIGINT (a terminal's Ctrl-C).
TEST(CleanStop, AKitBuiltWorkerRunsItsContextsShutdown) {
  expectCleanStop({KILN_COUNTER_WORKER, "--listen", "tcp://127.0.0.1:0"}, SIGTERM,
                  "counter context served 0 sessions");
  expectCleanStop({KILN_COUNTER_WORKER, "--listen", "tcp://127.0.0.1:0"}, SIGINT,
                  "counter context served 0 sessions");
  expectCleanStop({KILN_BINARY, "worker", "--listen", "tcp://127.0.0.1:0"}, SIGINT, "stopped");
}

// Commands that run an embedded cluster and end on their own: its workers
// (child processes) are stopped with SIGTERM and remove their directories.
// Before, they were SIGKILLed and each left kiln-worker-* and its .owner.
TEST(CleanStop, OneShotCommandsLeaveTmpdirAsTheyFoundIt) {
  testsupport::ScratchDir scratch("kiln-stop-test");
  const std::vector<std::vector<std::string>> commands{
      {"eval", "--benchmark", "benchmark://kiln-bench-v0/matmul", "--agent", "random", "--steps",
       "2", "--slots", "2"},
      {"datasets"},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    const fs::path tmp = scratch.path() / args[0];
    fs::create_directories(tmp);
    std::vector<std::string> command{"env", "TMPDIR=" + tmp.string(), KILN_BINARY};
    command.insert(command.end(), args.begin(), args.end());
    auto ran = runSubprocess(command, 120s);
    ASSERT_TRUE(ran.ok()) << ran.status().toString();
    EXPECT_TRUE(ran->status.success()) << ran->status.describe() << "\n" << ran->stderrText;
    EXPECT_TRUE(fs::is_empty(tmp)) << ::testing::PrintToString(leftIn(tmp));
  }
}

// A worker with noop sessions under an in-process coordinator, and two
// clients: a Client and its sessions belong to one thread, so a test that
// steps from two threads steps through two clients.
struct NoopWorker {
  InProcessCoordinator coordinator;
  Served worker;
  std::unique_ptr<client::Client> client;
  std::unique_ptr<client::Client> otherClient;
  explicit NoopWorker(std::vector<std::string> extra = {})
      : worker([&] {
          std::vector<std::string> command{
              KILN_BINARY,           "worker", "--coordinator",           coordinator.endpoint(),
              "--heartbeat-seconds", "0.1",    "--enable-fault-injection"};
          command.insert(command.end(), extra.begin(), extra.end());
          return command;
        }()) {
    client = connect();
    otherClient = connect();
    EXPECT_TRUE(waitUntil([&] { return client->listCluster()->size() == 1; }, 10s))
        << readAll(worker.err);
  }
  std::unique_ptr<client::Client> connect() {
    client::ClientOptions options;
    options.coordinator = coordinator.endpoint();
    options.requestTimeout = 10s;
    options.restoreLostSessions = false;  // a refusal must reach the test as it is
    auto connected = client::Client::connect(options);
    EXPECT_TRUE(connected.ok()) << connected.status().toString();
    return connected.ok() ? std::move(connected).value() : nullptr;
  }
  std::unique_ptr<client::Session> session(client::Client& through) {
    auto started = through.startSession({"noop", "benchmark://f/k"});
    EXPECT_TRUE(started.ok()) << started.status().toString() << "\n" << readAll(worker.err);
    return started.ok() ? std::move(started).value() : nullptr;
  }
  std::unique_ptr<client::Session> session() { return session(*client); }
};

Result<client::StepResult> stepOnce(client::Session& session) {
  return session.step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
}

// A step of `session` that never returns (it ignores cancellation), running
// in the returned thread by the time this returns; the thread ends when the
// worker does.
std::thread hangAStep(client::Session& session) {
  EXPECT_TRUE(session.setParameter("noop.hang_on_step", "forever").ok());
  std::thread stepping([&session] { (void)stepOnce(session); });
  std::this_thread::sleep_for(300ms);
  return stepping;
}

TEST(CleanStop, ARunningStepIsAnsweredAndNewRequestsAreRefusedWithTheReason) {
  NoopWorker cluster;
  auto busy = cluster.session(*cluster.otherClient);
  auto other = cluster.session();
  ASSERT_TRUE(busy && other);
  ASSERT_TRUE(busy->setParameter("noop.busy_us", "1500000").ok());
  std::optional<Result<client::StepResult>> answered;
  std::thread stepping([&] { answered.emplace(stepOnce(*busy)); });
  std::this_thread::sleep_for(300ms);  // the step runs
  ::kill(cluster.worker.process->pid(), SIGTERM);
  std::this_thread::sleep_for(200ms);
  auto refused = stepOnce(*other);
  EXPECT_EQ(refused.status().code(), ErrorCode::kDisconnected) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("is stopping"), std::string::npos)
      << refused.status().toString() << "\n"
      << readAll(cluster.worker.err);
  stepping.join();
  ASSERT_TRUE(answered.has_value());
  EXPECT_TRUE(answered->ok()) << answered->status().toString();
  std::optional<ExitStatus> status;
  waitUntil([&] { return (status = cluster.worker.process->poll()).has_value(); }, 10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->exitCode, 0) << status->describe();
  EXPECT_TRUE(fs::is_empty(cluster.worker.tmp));
}

// A step that never ends holds the drain; a second signal ends the process
// at once, nonzero, and still removes its working directory.
TEST(CleanStop, ASecondSignalStopsAtOnce) {
  NoopWorker cluster({"--drain-seconds", "60"});
  auto hung = cluster.session();
  ASSERT_TRUE(hung);
  std::thread stepping = hangAStep(*hung);
  ::kill(cluster.worker.process->pid(), SIGTERM);
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(cluster.worker.process->poll().has_value()) << "the drain did not wait";
  const auto status = cluster.worker.stop(SIGTERM, 5s);
  stepping.join();
  ASSERT_TRUE(status.has_value()) << "a second signal did not stop it";
  EXPECT_EQ(status->exitCode, kExitStoppedAtOnce) << status->describe();
  EXPECT_TRUE(fs::is_empty(cluster.worker.tmp))
      << ::testing::PrintToString(leftIn(cluster.worker.tmp));
}

// The operator's bound holds without a second signal: --drain-seconds, then
// kStopGrace for the shutdown, then a stop at once.
TEST(CleanStop, TheDrainEndsWithinTheOperatorsBound) {
  NoopWorker cluster({"--drain-seconds", "0.5"});
  auto hung = cluster.session();
  ASSERT_TRUE(hung);
  std::thread stepping = hangAStep(*hung);
  const auto began = std::chrono::steady_clock::now();
  const auto status = cluster.worker.stop(SIGTERM, 15s);
  stepping.join();
  ASSERT_TRUE(status.has_value()) << "still running 15 s after SIGTERM with --drain-seconds 0.5";
  EXPECT_LT(std::chrono::steady_clock::now() - began, 8s);
  EXPECT_EQ(status->exitCode, kExitStoppedAtOnce) << status->describe();
  EXPECT_TRUE(fs::is_empty(cluster.worker.tmp));
}

// Opens experiment alpha with one worker (on the nesting host `host`) and
// starts a noop session in it.
Result<std::unique_ptr<client::Session>> startInExperimentAlpha(client::Client& client,
                                                                const Served& host) {
  ExperimentSpec spec;
  spec.name = "alpha";
  spec.workers = 1;
  KILN_RETURN_IF_ERROR(client.openExperiment(spec).status());
  auto ready = client.waitForExperiment("alpha", 1, 10s);
  if (!ready.ok()) return internalError(ready.status().toString() + "\n" + readAll(host.err));
  return client.startSession({"noop", "benchmark://stop/x"});
}

// `kiln nest --isolate`: an experiment's child process is asked to stop,
// answers what it ran, runs its own copy of the contexts' shutdown (the noop
// context logs it, with the process's pid) and exits by itself; the host
// exits 0 and leaves TMPDIR as it found it. Before, the host SIGKILLed its
// children: their contexts' shutdown never ran.
TEST(CleanStop, AnIsolatedNestingHostsChildrenStopCleanly) {
  InProcessCoordinator coordinator;
  Served host({KILN_BINARY, "nest", "--isolate", "--coordinator", coordinator.endpoint(),
               "--heartbeat-seconds", "0.1", "--log-level", "debug", "--drain-seconds", "5"});
  ASSERT_TRUE(host.process && host.process->running()) << readAll(host.err);
  auto client = connectClient(coordinator.endpoint(), "alpha");
  auto session = startInExperimentAlpha(*client, host);
  ASSERT_TRUE(session.ok()) << session.status().toString() << "\n" << readAll(host.err);
  ASSERT_TRUE(stepOnce(**session).ok());
  std::vector<pid_t> children;
  std::ifstream list(
      fmt::format("/proc/{}/task/{}/children", host.process->pid(), host.process->pid()));
  for (pid_t pid; list >> pid;) children.push_back(pid);
  ASSERT_EQ(children.size(), 1u) << readAll(host.err);
  const pid_t child = children[0];
  // A stop from anyone but its host (here: this test) leaves it serving: the
  // host would take a child that left on its own for a crashed one.
  ::kill(child, SIGTERM);
  EXPECT_TRUE(waitUntil(
      [&] {
        return readAll(host.err).find("ignores a stop signal from process") != std::string::npos;
      },
      10s))
      << readAll(host.err);
  ASSERT_TRUE(stepOnce(**session).ok()) << readAll(host.err);

  const auto status = host.stop(SIGTERM, 20s);
  ASSERT_TRUE(status.has_value()) << "still running 20 s after SIGTERM\n" << readAll(host.err);
  const std::string log = readAll(host.err);
  EXPECT_EQ(status->exitCode, 0) << status->describe() << "\n" << log;
  EXPECT_NE(log.find(fmt::format("noop context shut down in process {}", child)), std::string::npos)
      << log;
  EXPECT_NE(
      log.find(fmt::format("the child process {} of experiment 'alpha' stopped cleanly", child)),
      std::string::npos)
      << log;
  EXPECT_EQ(log.find("killing it"), std::string::npos) << log;
  EXPECT_TRUE(fs::is_empty(host.tmp)) << ::testing::PrintToString(leftIn(host.tmp));
}

// A child whose step never ends cannot stop by itself: past what is left of
// --drain-seconds (at least 1 s) its host kills it, says so, answers the
// step with the reason and still exits 0 within the operator's bound.
TEST(CleanStop, AnIsolatedChildThatDoesNotStopIsKilledAndLogged) {
  InProcessCoordinator coordinator;
  Served host({KILN_BINARY, "nest", "--isolate", "--coordinator", coordinator.endpoint(),
               "--heartbeat-seconds", "0.1", "--drain-seconds", "0.5", "--enable-fault-injection"});
  ASSERT_TRUE(host.process && host.process->running()) << readAll(host.err);
  auto client = connectClient(coordinator.endpoint(), "alpha");
  auto session = startInExperimentAlpha(*client, host);
  ASSERT_TRUE(session.ok()) << session.status().toString() << "\n" << readAll(host.err);
  std::thread stepping = hangAStep(**session);
  const auto began = std::chrono::steady_clock::now();
  const auto status = host.stop(SIGTERM, 15s);
  const auto took = std::chrono::steady_clock::now() - began;
  stepping.join();  // its client looks for another worker first
  ASSERT_TRUE(status.has_value()) << "still running 15 s after SIGTERM\n" << readAll(host.err);
  EXPECT_LT(took, 5s);  // 0.5 s of drain, 1 s for the child, well inside kStopGrace
  const std::string log = readAll(host.err);
  EXPECT_EQ(status->exitCode, 0) << status->describe() << "\n" << log;
  EXPECT_NE(log.find("of experiment 'alpha' did not stop within"), std::string::npos) << log;
  EXPECT_TRUE(fs::is_empty(host.tmp)) << ::testing::PrintToString(leftIn(host.tmp));
}

}  // namespace
}  // namespace kiln::fault
