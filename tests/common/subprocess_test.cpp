// Child processes: exit codes, signals, redirection, limits, deadlines and
// the promise that no child is ever left unreaped.
#include "common/process/subprocess.h"
#include "tests/support/process_probe.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kiln {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using testsupport::processGone;

// No zombie children of this test process.
bool noZombieChildren() {
  int raw = 0;
  return ::waitpid(-1, &raw, WNOHANG) <= 0;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-subprocess-XXXXXX");
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ExitStatusTest, Describe) {
  EXPECT_EQ((ExitStatus{1, 0}).describe(), "exited with code 1");
  EXPECT_EQ((ExitStatus{-1, 9}).describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_TRUE((ExitStatus{0, 0}).success());
  EXPECT_FALSE((ExitStatus{-1, 15}).success());
}

TEST(SubprocessTest, ExitCodes) {
  for (int code : {0, 1, 3, 255}) {
    auto out = runSubprocess({"sh", "-c", "exit " + std::to_string(code)}, 10s);
    ASSERT_TRUE(out.ok()) << out.status().toString();
    EXPECT_FALSE(out->status.signaled());
    EXPECT_EQ(out->status.exitCode, code);
  }
  EXPECT_TRUE(noZombieChildren());
}

TEST(SubprocessTest, SignalIsReported) {
  auto out = runSubprocess({"sh", "-c", "kill -TERM $$"}, 10s);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_TRUE(out->status.signaled());
  EXPECT_EQ(out->status.signal, SIGTERM);
  EXPECT_EQ(out->status.describe(), "killed by signal 15 (SIGTERM)");
}

TEST(SubprocessTest, MissingProgramIsNotFound) {
  auto child = Subprocess::spawn({"kiln-no-such-program-xyz"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(child.status().message().find("kiln-no-such-program-xyz"), std::string::npos);

  auto absolute = Subprocess::spawn({"/nonexistent/dir/tool"});
  ASSERT_FALSE(absolute.ok());
  EXPECT_EQ(absolute.status().code(), ErrorCode::kNotFound);

  auto run = runSubprocess({"kiln-no-such-program-xyz"}, 1s);
  EXPECT_EQ(run.status().code(), ErrorCode::kNotFound);
}

TEST(SubprocessTest, EmptyArgvIsInvalid) {
  auto child = Subprocess::spawn({});
  EXPECT_EQ(child.status().code(), ErrorCode::kInvalidArgument);
}

TEST(SubprocessTest, MissingWorkingDirectoryIsNotFound) {
  SubprocessOptions options;
  options.workingDirectory = "/nonexistent/kiln/dir";
  auto child = Subprocess::spawn({"true"}, options);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(noZombieChildren());
}

TEST(SubprocessTest, RedirectsToFilesAndWorkingDirectory) {
  TempDir dir;
  {
    std::ofstream in(dir.path() / "in.txt");
    in << "hello from stdin\n";
  }
  SubprocessOptions options;
  options.workingDirectory = dir.path();
  options.stdinPath = dir.path() / "in.txt";
  options.stdoutPath = dir.path() / "out.txt";
  options.stderrPath = dir.path() / "err.txt";
  auto child = Subprocess::spawn({"sh", "-c", "cat; pwd; echo oops >&2"}, options);
  ASSERT_TRUE(child.ok()) << child.status().toString();
  auto status = child->waitFor(10s);
  ASSERT_TRUE(status.ok()) << status.status().toString();
  EXPECT_TRUE(status->success());
  EXPECT_EQ(readFile(dir.path() / "out.txt"),
            "hello from stdin\n" + std::filesystem::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(readFile(dir.path() / "err.txt"), "oops\n");
}

TEST(SubprocessTest, DefaultStdinIsDevNull) {
  auto out = runSubprocess({"sh", "-c", "cat | wc -c"}, 10s);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ(out->stdoutText.find_first_not_of(" \t"), out->stdoutText.find('0'));
}

TEST(SubprocessTest, CapturesBothStreams) {
  auto out = runSubprocess({"sh", "-c", "echo out; echo err >&2; exit 2"}, 10s);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ(out->stdoutText, "out\n");
  EXPECT_EQ(out->stderrText, "err\n");
  EXPECT_EQ(out->status.exitCode, 2);
}

TEST(SubprocessTest, CaptureLimitTruncatesWithoutDeadlock) {
  // 8 MiB on each stream: far more than a pipe buffer, so unread pipes would block the child.
  auto start = Clock::now();
  auto out = runSubprocess(
      {"sh", "-c", "head -c 8388608 /dev/zero; head -c 8388608 /dev/zero >&2; exit 0"}, 30s, {},
      1000);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_TRUE(out->status.success());
  EXPECT_EQ(out->stdoutText.size(), 1000u);
  EXPECT_EQ(out->stderrText.size(), 1000u);
  EXPECT_LT(Clock::now() - start, 20s);
}

TEST(SubprocessTest, TimeoutKillsWithinBound) {
  auto start = Clock::now();
  auto out = runSubprocess({"sleep", "30"}, 200ms);
  auto elapsed = Clock::now() - start;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(out.status().message().find("sleep 30"), std::string::npos);
  EXPECT_LT(elapsed, 5s);
  EXPECT_GE(elapsed, 190ms);
  EXPECT_TRUE(noZombieChildren());
}

TEST(SubprocessTest, TimeoutKillsGrandchildrenHoldingThePipe) {
  // The shell's child inherits stdout; killing only the shell would leave it.
  auto start = Clock::now();
  auto out = runSubprocess({"sh", "-c", "sleep 30; echo never"}, 200ms);
  EXPECT_EQ(out.status().code(), ErrorCode::kTimeout);
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(SubprocessTest, ExitWhileBackgroundChildHoldsPipeReturnsPromptly) {
  TempDir dir;
  auto pidFile = dir.path() / "bg.pid";
  auto start = Clock::now();
  auto out =
      runSubprocess({"sh", "-c", "sleep 30 & echo $! > " + pidFile.string() + "; echo done"}, 20s);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ(out->stdoutText, "done\n");
  EXPECT_LT(Clock::now() - start, 5s);
  // Clean up the orphan ourselves (it was reparented, not our child).
  pid_t bg = std::stoi(readFile(pidFile));
  ::kill(bg, SIGKILL);
}

TEST(SubprocessTest, WaitForTimesOutThenKillReaps) {
  auto child = Subprocess::spawn({"sleep", "30"});
  ASSERT_TRUE(child.ok()) << child.status().toString();
  pid_t pid = child->pid();
  EXPECT_TRUE(child->running());
  EXPECT_FALSE(child->poll().has_value());
  auto start = Clock::now();
  auto waited = child->waitFor(100ms);
  EXPECT_EQ(waited.status().code(), ErrorCode::kTimeout);
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_TRUE(child->running());

  ExitStatus status = child->kill();
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_FALSE(child->running());
  EXPECT_TRUE(processGone(pid));
  // Repeated kill returns the same final status.
  EXPECT_EQ(child->kill().signal, SIGKILL);
  auto again = child->waitFor(10ms);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->signal, SIGKILL);
}

TEST(SubprocessTest, DestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    auto child = Subprocess::spawn({"sleep", "30"});
    ASSERT_TRUE(child.ok()) << child.status().toString();
    pid = child->pid();
    ASSERT_FALSE(processGone(pid));
  }
  EXPECT_TRUE(processGone(pid));
}

TEST(SubprocessTest, KillChildProcessGroupsEndsChildrenAndWhatTheyStarted) {
  // What a Ctrl-C during `kiln datasets install` does: the step's shell and
  // the jobs it started in the background (make's compilers) all end.
  const auto pids = std::filesystem::temp_directory_path() /
                    ("kiln-groups-" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(pids);
  auto step = Subprocess::spawn({"sh", "-c",
                                 "sleep 30 & echo $! >> " + pids.string() +
                                     "; sleep 30 & echo $! >> " + pids.string() + "; wait"});
  ASSERT_TRUE(step.ok()) << step.status().toString();
  auto other = Subprocess::spawn({"sleep", "30"});
  ASSERT_TRUE(other.ok()) << other.status().toString();
  std::vector<int> jobs;
  for (auto until = Clock::now() + 10s; jobs.size() < 2 && Clock::now() < until;) {
    std::this_thread::sleep_for(10ms);
    jobs.clear();
    std::ifstream in(pids);
    for (int pid = 0; in >> pid;) jobs.push_back(pid);
  }
  ASSERT_EQ(jobs.size(), 2u);

  EXPECT_EQ(killChildProcessGroups(), 2);
  auto ended = step->waitFor(10s);
  ASSERT_TRUE(ended.ok()) << ended.status().toString();
  EXPECT_EQ(ended->signal, SIGKILL);
  auto otherEnded = other->waitFor(10s);
  ASSERT_TRUE(otherEnded.ok()) << otherEnded.status().toString();
  EXPECT_EQ(otherEnded->signal, SIGKILL);
  // The background jobs were reparented when the shell died: only the
  // group kill reaches them.
  auto gone = [](int pid) {
    auto info = testsupport::readProcess(pid);
    return !info || info->zombie();  // a zombie waits for its new parent to reap it
  };
  for (int job : jobs) {
    auto until = Clock::now() + 10s;
    while (!gone(job) && Clock::now() < until) std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(gone(job)) << "job " << job << " outlived the kill";
  }
  std::filesystem::remove(pids);
}

TEST(SubprocessTest, MoveTransfersOwnership) {
  auto child = Subprocess::spawn({"sleep", "30"});
  ASSERT_TRUE(child.ok()) << child.status().toString();
  pid_t pid = child->pid();
  Subprocess moved = std::move(child).value();
  EXPECT_EQ(moved.pid(), pid);
  Subprocess target = std::move(moved);
  EXPECT_FALSE(moved.running());  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_TRUE(target.running());
  target.kill();
  EXPECT_TRUE(processGone(pid));
}

TEST(SubprocessTest, PollReapsFinishedChild) {
  auto child = Subprocess::spawn({"true"});
  ASSERT_TRUE(child.ok());
  auto status = child->waitFor(10s);
  ASSERT_TRUE(status.ok()) << status.status().toString();
  EXPECT_TRUE(status->success());
  EXPECT_TRUE(processGone(child->pid()));
  ASSERT_TRUE(child->poll().has_value());
  EXPECT_TRUE(child->poll()->success());
}

TEST(SubprocessTest, MemoryLimitApplies) {
  SubprocessOptions options;
  options.memoryLimitBytes = 64ull << 20;
  // ulimit -v reports KiB.
  auto out = runSubprocess({"sh", "-c", "ulimit -v"}, 10s, options);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_EQ(out->stdoutText, std::to_string(64 << 10) + "\n");
}

TEST(SubprocessTest, CpuLimitKillsBusyChild) {
  SubprocessOptions options;
  options.cpuLimitSeconds = 1;
  auto start = Clock::now();
  auto out = runSubprocess({"sh", "-c", "while :; do :; done"}, 20s, options);
  ASSERT_TRUE(out.ok()) << out.status().toString();
  EXPECT_TRUE(out->status.signaled());
  EXPECT_TRUE(out->status.signal == SIGXCPU || out->status.signal == SIGKILL)
      << out->status.describe();
  EXPECT_LT(Clock::now() - start, 15s);
}

TEST(SubprocessTest, ManySpawnsLeaveNoZombies) {
  for (int i = 0; i < 50; ++i) {
    auto out = runSubprocess({"true"}, 10s);
    ASSERT_TRUE(out.ok()) << out.status().toString();
  }
  for (int i = 0; i < 20; ++i) {
    auto child = Subprocess::spawn({"sleep", "10"});
    ASSERT_TRUE(child.ok());
  }
  EXPECT_TRUE(noZombieChildren());
}

}  // namespace
}  // namespace kiln
