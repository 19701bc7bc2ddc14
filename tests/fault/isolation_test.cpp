// `kiln nest --isolate` with real processes and signals: a step that
// crashes (SIGSEGV, abort) takes down only its experiment's child process;
// another experiment on the same host keeps stepping without one failed
// step; the crashed experiment's sessions are restored by replay; a step
// that crashes again on replay is answered with a compile error. A step
// that hangs past every deadline gets its child killed and restarted.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/base/sanitizers.h"
#include "common/process/working_directory.h"
#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"

namespace kiln::fault {
namespace {

const std::string kCrasherDir = std::filesystem::path(KILN_CRASHER_IR).parent_path().string();

struct IsolatedHost {
  explicit IsolatedHost(const std::string& coordinator, std::vector<std::string> extra = {})
      : children(testsupport::ChildCluster::create(KILN_BINARY).value()) {
    // The crasher module lives in the source tree, outside the test's
    // directory; the children read it with the host's --allow-files.
    std::vector<std::string> args{"nest",
                                  "--isolate",
                                  "--coordinator",
                                  coordinator,
                                  "--slots",
                                  "2",
                                  "--heartbeat-seconds",
                                  "0.1",
                                  "--log-level",
                                  "warn",
                                  "--allow-files",
                                  kCrasherDir,
                                  "--enable-fault-injection"};
    args.insert(args.end(), extra.begin(), extra.end());
    host = children.spawn(args).value();
  }
  testsupport::ChildCluster children;
  testsupport::ChildProcess* host = nullptr;
};

std::unique_ptr<client::Client> tenant(const std::string& coordinator, const std::string& name,
                                       Duration timeout = 5s) {
  auto client = connectClient(coordinator, name, timeout);
  ExperimentSpec spec;
  spec.name = name;
  spec.workers = 1;
  EXPECT_TRUE(client->openExperiment(spec).ok());
  EXPECT_TRUE(client->waitForExperiment(name, 1, 10s).ok());
  return client;
}

std::vector<std::unique_ptr<client::Session>> startSessions(client::Client& client, int count) {
  std::vector<std::unique_ptr<client::Session>> sessions;
  for (int i = 0; i < count; ++i) {
    sessions.push_back(client.startSession({"noop", "benchmark://iso/x"}).value());
  }
  return sessions;
}

TEST(Isolation, CrashingStepTakesDownOnlyItsExperimentAndIsRefusedOnReplay) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto beta = tenant(coordinator.endpoint(), "beta");
  auto alpha = tenant(coordinator.endpoint(), "alpha");
  BackgroundStepper bystander(startSessions(*beta, 2));

  auto sessions = startSessions(*alpha, 3);
  for (int i = 0; i < 5; ++i) {
    for (auto& s : sessions) {
      ASSERT_TRUE(s->step({Value(std::int64_t{2})}, std::vector<std::string>{}).ok());
    }
  }
  std::uint64_t stepsBefore = bystander.steps();
  for (const char* signal : {"segv", "abort"}) {
    SCOPED_TRACE(signal);
    auto& crasher = sessions[signal[0] == 's' ? 0 : 1];
    ASSERT_TRUE(crasher->setParameter("noop.crash_on_step", signal).ok());
    // Crashes the child; the client restores the session by replay (which
    // sets the parameter again), the re-sent step runs alone and crashes the
    // new child too: certain blame, a compile error, no crash loop.
    auto crashed = crasher->step({Value(std::int64_t{3})}, std::vector<std::string>{"Sum"});
    ASSERT_FALSE(crashed.ok());
    EXPECT_EQ(crashed.status().code(), ErrorCode::kCompileError) << crashed.status().toString();
    // Sent again, it is refused without running (the host stays up).
    auto again = crasher->step({Value(std::int64_t{3})}, std::vector<std::string>{"Sum"});
    EXPECT_EQ(again.status().code(), ErrorCode::kCompileError) << again.status().toString();
    EXPECT_GE(crasher->restores(), 1u);
  }
  // The crashed experiment's other session lived in the dead children: it is
  // restored by replay and its state is intact.
  auto survivor = sessions[2]->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(survivor.ok()) << survivor.status().toString();
  EXPECT_EQ(survivor->observations[0].as<std::int64_t>(), 11);
  EXPECT_GE(sessions[2]->restores(), 1u);
  EXPECT_GE(alpha->restoredSessions(), 3u);

  ASSERT_TRUE(waitUntil([&] { return bystander.steps() > stepsBefore + 20; }, 10s));
  bystander.stop();
  EXPECT_EQ(bystander.failures(), 0u) << bystander.firstFailure();
  EXPECT_FALSE(host.host->process.poll().has_value()) << "the nesting host itself died";
  // A new session of the crashed experiment works normally.
  auto fresh = alpha->startSession({"noop", "benchmark://iso/y"});
  ASSERT_TRUE(fresh.ok()) << fresh.status().toString();
  EXPECT_TRUE((*fresh)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
}

TEST(Isolation, ChildrenReadFilesOnlyBelowTheHostsAllowedDirectories) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto alpha = tenant(coordinator.endpoint(), "alpha", 30s);
  auto inside = alpha->startSession(llvmSession("file://" KILN_CRASHER_IR));
  EXPECT_TRUE(inside.ok()) << inside.status().toString();
  auto outside = alpha->startSession(
      llvmSession("file://" + (std::filesystem::current_path() / "no-such.ll").string()));
  EXPECT_EQ(outside.status().code(), ErrorCode::kPermissionDenied) << outside.status().toString();
  auto sibling = alpha->startSession(llvmSession("benchmark://kiln-bench-v0/crc32"));
  ASSERT_TRUE(sibling.ok()) << sibling.status().toString();
  const std::vector<std::string> count{"IrInstructionCount"};
  EXPECT_TRUE((*sibling)->step({passAction(**sibling, "mem2reg")}, count).ok());
}

// Issue 48: in `kiln nest`'s isolated children too, a module's assembly made
// LLVM echo lines of a host file into the compile error. The children check
// every module where it enters, as a plain worker does.
TEST(Isolation, ChildrenRefuseModulesThatReachForHostFiles) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto alpha = tenant(coordinator.endpoint(), "alpha", 30s);
  const std::filesystem::path secretFile =
      std::filesystem::temp_directory_path() / ("kiln-iso-secret-" + std::to_string(::getpid()));
  const std::string secret = "kiln_secret_line_77aa must never reach a client";
  std::ofstream(secretFile) << secret << "\n";
  auto options = llvmSession("inline://hostile/include");
  options.program = "target triple = \"x86_64-unknown-linux-gnu\"\nmodule asm \".include \\22" +
                    secretFile.string() + "\\22\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  auto session = alpha->startSession(options);
  Status status = session.ok() ? okStatus() : session.status();
  if (session.ok()) {
    auto observed = (*session)->step({}, std::vector<std::string>{"ObjectTextSizeBytes"});
    status = observed.ok() ? okStatus() : observed.status();
  }
  std::filesystem::remove(secretFile);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.toString();
  // Refused by the child's module policy where the module enters, not only
  // failed later by the confined code generator (a compile error).
  EXPECT_NE(status.message().find("kiln refuses it"), std::string::npos) << status.toString();
  EXPECT_NE(status.message().find(".include"), std::string::npos) << status.toString();
  EXPECT_EQ(status.message().find(secret), std::string::npos) << status.toString();
}

TEST(Isolation, AChildThatCaughtAnLlvmCrashIsRestartedWithoutDisturbingOthers) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto beta = tenant(coordinator.endpoint(), "beta");
  auto alpha = tenant(coordinator.endpoint(), "alpha", 30s);
  BackgroundStepper bystander(startSessions(*beta, 2));
  // LLVM 19's loop-bound-split dies with SIGSEGV on this module (opt-19 too).
  auto crasher = alpha->startSession(llvmSession("file://" KILN_CRASHER_IR)).value();
  auto sibling = alpha->startSession(llvmSession("benchmark://kiln-bench-v0/crc32")).value();
  const std::vector<std::string> count{"IrInstructionCount"};
  ASSERT_TRUE(sibling->step({passAction(*sibling, "mem2reg")}, count).ok());
  std::uint64_t stepsBefore = bystander.steps();

  // The child catches the crash, answers it, and stops because its memory
  // may be damaged; the host starts a fresh child for alpha.
  auto crashed = crasher->step({passAction(*crasher, "loop-bound-split")}, count);
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), ErrorCode::kCompileError) << crashed.status().toString();
  EXPECT_NE(crashed.status().message().find("signal 11"), std::string::npos)
      << crashed.status().toString();

  // Alpha's other session lived in that child: restored by replay, it steps
  // on exactly as a session that never moved.
  auto moved = sibling->step({passAction(*sibling, "gvn")}, count);
  ASSERT_TRUE(moved.ok()) << moved.status().toString();
  EXPECT_GE(sibling->restores(), 1u);
  EXPECT_EQ(moved->observations.at(0).as<std::int64_t>(),
            instructionCountAfter(*alpha, "benchmark://kiln-bench-v0/crc32", {"mem2reg", "gvn"}));

  ASSERT_TRUE(waitUntil([&] { return bystander.steps() > stepsBefore + 20; }, 10s));
  bystander.stop();
  EXPECT_EQ(bystander.failures(), 0u) << bystander.firstFailure();
  EXPECT_FALSE(host.host->process.poll().has_value()) << "the nesting host itself died";
  std::ifstream log(host.host->stderrPath);
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("stopped after a crash it caught"), std::string::npos) << text;
}

TEST(Isolation, ExternallyKilledChildIsRestartedAndSessionsRestored) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto alpha = tenant(coordinator.endpoint(), "alpha");
  auto beta = tenant(coordinator.endpoint(), "beta");
  auto a = startSessions(*alpha, 1);
  BackgroundStepper bystander(startSessions(*beta, 1));
  ASSERT_TRUE(a[0]->step({Value(std::int64_t{4})}, std::vector<std::string>{}).ok());
  // The children are the host's only child processes named kiln-isolated;
  // find alpha's by killing the one that is not beta's: kill them in turn is
  // not allowed (beta must not fail), so ask /proc for children of the host.
  std::vector<pid_t> kids;
  std::ifstream list(
      fmt::format("/proc/{}/task/{}/children", host.host->process.pid(), host.host->process.pid()));
  for (pid_t pid; list >> pid;) kids.push_back(pid);
  ASSERT_EQ(kids.size(), 2u);
  // alpha's child was forked first (its experiment was opened first).
  ::kill(std::min(kids[0], kids[1]), SIGKILL);
  auto stepped = a[0]->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_EQ(stepped->observations[0].as<std::int64_t>(), 5);
  EXPECT_EQ(a[0]->restores(), 1u);
  std::this_thread::sleep_for(200ms);
  bystander.stop();
  EXPECT_GT(bystander.steps(), 0u);
  EXPECT_EQ(bystander.failures(), 0u) << bystander.firstFailure();
}

TEST(Isolation, StepHangingPastEveryDeadlineGetsItsChildRestarted) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint());
  auto alpha = tenant(coordinator.endpoint(), "alpha", 1s);
  auto beta = tenant(coordinator.endpoint(), "beta");
  BackgroundStepper bystander(startSessions(*beta, 2));
  auto sessions = startSessions(*alpha, 2);
  // Only the bystander warms up: the hanging step is its session's first,
  // so it runs on the child's pool and keeps its slot token (the host's
  // token watch); a later cheap step would hang the child's loop instead
  // (the host's request deadline watch).
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(sessions[1]->step({Value(std::int64_t{1})}, std::vector<std::uint32_t>{0}).ok());
  ASSERT_TRUE(sessions[0]->setParameter("noop.hang_on_step", "forever").ok());
  auto hung = sessions[0]->step({Value(std::int64_t{1})}, std::vector<std::string>{});
  EXPECT_EQ(hung.status().code(), ErrorCode::kTimeout) << hung.status().toString();
  // The hung task holds a slot token past every deadline of its child (1 s
  // here): the host kills and restarts the child; the other session is
  // restored by replay. No request of this experiment may reach the child
  // meanwhile (each would extend the deadline being watched), so wait long
  // enough for a loaded machine: 1 s deadline + grace + restart.
  std::this_thread::sleep_for(3s);
  auto other = sessions[1]->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(other.ok()) << other.status().toString();
  EXPECT_EQ(other->observations[0].as<std::int64_t>(), 4);  // 3 + 1, replayed
  EXPECT_EQ(sessions[1]->restores(), 1u);
  bystander.stop();
  EXPECT_EQ(bystander.failures(), 0u) << bystander.firstFailure();
  EXPECT_FALSE(host.host->process.poll().has_value());
}

}  // namespace
}  // namespace kiln::fault

namespace kiln::fault {
namespace {

std::string addressSpaceLimit(pid_t pid) {
  std::ifstream limits(fmt::format("/proc/{}/limits", pid));
  for (std::string line; std::getline(limits, line);) {
    if (line.starts_with("Max address space")) return line;
  }
  return {};
}

TEST(Isolation, ChildProcessesRunUnderTheCompileMemoryLimit) {
  if (kUnderAddressSanitizer) {
    GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit, so sanitizer "
                    "builds set none (nesting/isolated_child.cpp)";
  }
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint(), {"--compile-memory-mb", "3072"});
  auto alpha = tenant(coordinator.endpoint(), "alpha");
  auto sessions = startSessions(*alpha, 1);
  ASSERT_TRUE(sessions[0]->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
  pid_t hostPid = host.host->process.pid();
  std::ifstream list(fmt::format("/proc/{}/task/{}/children", hostPid, hostPid));
  std::vector<pid_t> kids;
  for (pid_t pid; list >> pid;) kids.push_back(pid);
  ASSERT_EQ(kids.size(), 1u);
  // The child compiles in-process, so the limit is set in the child itself.
  std::string limit = addressSpaceLimit(kids[0]);
  EXPECT_NE(limit.find(std::to_string(std::uint64_t{3072} << 20)), std::string::npos) << limit;
}

}  // namespace
}  // namespace kiln::fault

namespace kiln::fault {
namespace {

// Whether a process of this user runs with `argv0` as its argv[0] (an
// mlgo-inline episode keeps its opt running).
bool aProcessIsNamed(const std::string& argv0) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string first;
    if (std::getline(cmdline, first, '\0') && first == argv0) return true;
  }
  return false;
}

// Every operator flag reaches the per-experiment children, which are forked
// with the host's settings: the opt an mlgo-inline session runs there is
// --mlgo-opt's, a client cannot name another, and without
// --enable-fault-injection the fault hooks are refused in the child too.
TEST(Isolation, TheOperatorsFlagsReachTheChildProcesses) {
  auto scripts = WorkingDirectory::create({}, "kiln-isolation-test");
  ASSERT_TRUE(scripts.ok()) << scripts.status().toString();
  // The operator's opt runs confined (it may write only in its session's
  // directory), so it leaves no file behind: it shows itself by its name
  // instead, the argv[0] it gives the opt-19 it becomes.
  const std::string optName = fmt::format("kiln-operator-opt-{}", ::getpid());
  const std::filesystem::path opt = scripts->path() / "operator-opt";
  std::ofstream(opt) << "#!/bin/bash\nexec -a " << optName << " opt-19 \"$@\"\n";
  std::filesystem::permissions(opt, std::filesystem::perms::owner_all);

  InProcessCoordinator coordinator;
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  auto* host =
      children
          .spawn({"nest", "--isolate", "--coordinator", coordinator.endpoint(),
                  "--heartbeat-seconds", "0.1", "--log-level", "warn", "--mlgo-opt", opt.string()})
          .value();
  auto alpha = tenant(coordinator.endpoint(), "alpha", 30s);
  client::SessionOptions options{"mlgo-inline", "benchmark://kiln-bench-v0/huffman"};
  auto session = alpha->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  EXPECT_TRUE(aProcessIsNamed(optName)) << "the child did not run the operator's opt";
  ASSERT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());

  auto named = alpha->workerParameter(host->endpoint, "mlgo.opt", "/bin/true");
  EXPECT_EQ(named.status().code(), ErrorCode::kPermissionDenied) << named.status().toString();
  auto noop = alpha->startSession({"noop", "benchmark://iso/x"});
  ASSERT_TRUE(noop.ok()) << noop.status().toString();
  auto crash = (*noop)->setParameter("noop.crash_on_step", "segv");
  EXPECT_EQ(crash.status().code(), ErrorCode::kPermissionDenied) << crash.status().toString();
  EXPECT_TRUE((*noop)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
  EXPECT_FALSE(host->process.poll().has_value());
}

// Issue 48: an operator who raises --max-message-bytes raises it for the
// children too. They read their host's messages with the default 64 MiB
// limit, so a larger request the host accepted was dropped in the child and
// its client heard only the host's timeout, after its deadline.
TEST(Isolation, RaisedMessageLimitsReachTheChildProcesses) {
  InProcessCoordinator coordinator;
  IsolatedHost host(coordinator.endpoint(),
                    {"--max-message-bytes", std::to_string(std::uint64_t{128} << 20),
                     "--max-benchmark-bytes", std::to_string(std::uint64_t{96} << 20)});
  client::ClientOptions options;
  options.coordinator = coordinator.endpoint();
  options.experiment = "alpha";
  options.requestTimeout = 20s;
  options.leasePeriod = 100ms;
  options.frames.maxMessageBytes = std::uint64_t{128} << 20;
  auto alpha = std::move(client::Client::connect(options).value());
  ExperimentSpec spec;
  spec.name = "alpha";
  spec.workers = 1;
  ASSERT_TRUE(alpha->openExperiment(spec).ok());
  ASSERT_TRUE(alpha->waitForExperiment("alpha", 1, 10s).ok());

  client::SessionOptions large{"noop", "benchmark://iso/large"};
  large.program = std::string(std::size_t{70} << 20, 'x');
  const auto sent = std::chrono::steady_clock::now();
  auto session = alpha->startSession(large);
  const auto took = std::chrono::steady_clock::now() - sent;
  ASSERT_TRUE(session.ok()) << session.status().toString();
  // Answered by the child, not by the host once the deadline passed.
  EXPECT_LT(took, 15s);
  EXPECT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());
  EXPECT_FALSE(host.host->process.poll().has_value());
}

}  // namespace
}  // namespace kiln::fault
