#include "common/process/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "common/base/unique_fd.h"
#include "common/process/child_setup.h"
#include "common/security/file_confinement.h"

extern char** environ;

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

std::string errnoText(int err) { return std::strerror(err); }

const char* signalName(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSYS:
      return "SIGSYS";
    default:
      return "unknown signal";
  }
}

// "clang-19 -O2 x.c" shortened for messages.
std::string commandText(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg;
    if (text.size() > 200) {
      text.resize(200);
      text += "...";
      break;
    }
  }
  return text;
}

bool isExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// PATH lookup happens in the parent so the child only calls execve (execvp is
// not async-signal-safe) and a missing program is a not-found status, not exit 127.
Result<std::string> resolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (::access(program.c_str(), F_OK) != 0)
      return notFound("program " + program + " does not exist");
    if (!isExecutableFile(program)) {
      return permissionDenied("program " + program + " is not an executable regular file");
    }
    return program;
  }
  const char* env = std::getenv("PATH");
  std::string_view path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    auto colon = path.find(':');
    std::string dir(path.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (isExecutableFile(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return notFound("program " + program + " was not found in PATH");
}

Result<UniqueFd> openStdio(const std::filesystem::path& path, bool forWriting, const char* what) {
  std::string name = path.empty() ? "/dev/null" : path.string();
  int flags = forWriting ? (O_WRONLY | O_CREAT | O_TRUNC) : O_RDONLY;
  int fd = ::open(name.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    std::string message = std::string("cannot open ") + what + " " + name + ": " + errnoText(err);
    if (err == ENOENT) return notFound(message);
    if (err == EACCES) return permissionDenied(message);
    return invalidArgument(message);
  }
  return UniqueFd(fd);
}

// What the child reports through the exec-error pipe before _exit.
struct ChildFailure {
  int stage;  // 0 = setup (dup2, chdir, setrlimit), 1 = execve
  int err;
};

// Runs in the forked child: only async-signal-safe calls from here on.
[[noreturn]] void childMain(const char* program, char* const* argv, const char* workdir,
                            int stdinFd, int stdoutFd, int stderrFd, int errorFd,
                            const SubprocessOptions& options, pid_t parent) {
  auto fail = [errorFd](int stage) {
    ChildFailure failure{stage, errno};
    ssize_t ignored = ::write(errorFd, &failure, sizeof(failure));
    (void)ignored;
    ::_exit(127);
  };
  prepareForkedChild(options.dieWithParent, parent);

  const int sources[3] = {stdinFd, stdoutFd, stderrFd};
  for (int target = 0; target < 3; ++target) {
    if (sources[target] == target) {
      // dup2 onto itself keeps O_CLOEXEC; clear it so the fd survives exec.
      if (::fcntl(target, F_SETFD, 0) != 0) fail(0);
    } else if (::dup2(sources[target], target) < 0) {
      fail(0);
    }
  }
  // Descriptors the parent left inheritable (sockets of other threads) must not leak.
  ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
  if (workdir != nullptr && ::chdir(workdir) != 0) fail(0);
  if (options.memoryLimitBytes) {
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = *options.memoryLimitBytes;
    if (::setrlimit(RLIMIT_AS, &limit) != 0) fail(0);
  }
  if (options.cpuLimitSeconds) {
    struct rlimit limit {};
    limit.rlim_cur = *options.cpuLimitSeconds;
    // The hard limit a second later turns SIGXCPU into SIGKILL for tools that catch it.
    limit.rlim_max = *options.cpuLimitSeconds + 1;
    if (::setrlimit(RLIMIT_CPU, &limit) != 0) fail(0);
  }
  // Last: what follows may touch only what the confinement allows.
  if (options.confinement != nullptr && !options.confinement->enter()) fail(0);
  ::execve(program, argv, environ);
  fail(1);
  ::_exit(127);
}

// A pidfd lets waits sleep in poll(); -1 on kernels without pidfd_open.
int openPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

}  // namespace

ExitStatus fromWaitStatus(int raw) {
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signal = WTERMSIG(raw);
  } else if (WIFEXITED(raw)) {
    status.exitCode = WEXITSTATUS(raw);
  }
  return status;
}

std::string ExitStatus::describe() const {
  if (signaled()) {
    return "killed by signal " + std::to_string(signal) + " (" + signalName(signal) + ")";
  }
  return "exited with code " + std::to_string(exitCode);
}

Result<Subprocess> Subprocess::spawn(const std::vector<std::string>& argv,
                                     const SubprocessOptions& options) {
  return spawnImpl(argv, options, StdioOverride{});
}

Result<Subprocess> Subprocess::spawnImpl(const std::vector<std::string>& argv,
                                         const SubprocessOptions& options, StdioOverride stdio) {
  if (argv.empty() || argv[0].empty()) return invalidArgument("cannot spawn an empty command");
  KILN_ASSIGN_OR_RETURN(std::string program, resolveProgram(argv[0]));
  // Everything that allocates or can fail with a useful message happens before fork.
  KILN_ASSIGN_OR_RETURN(UniqueFd stdinFd, openStdio(options.stdinPath, false, "stdin"));
  UniqueFd stdoutFile, stderrFile;
  if (stdio.stdoutFd < 0) {
    KILN_ASSIGN_OR_RETURN(stdoutFile, openStdio(options.stdoutPath, true, "stdout"));
  }
  if (stdio.stderrFd < 0) {
    KILN_ASSIGN_OR_RETURN(stderrFile, openStdio(options.stderrPath, true, "stderr"));
  }
  int stdoutFd = stdio.stdoutFd >= 0 ? stdio.stdoutFd : stdoutFile.get();
  int stderrFd = stdio.stderrFd >= 0 ? stdio.stderrFd : stderrFile.get();

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::string workdir = options.workingDirectory.string();

  int errorPipe[2];
  if (::pipe2(errorPipe, O_CLOEXEC) != 0) {
    return internalError("pipe2 failed while spawning " + argv[0] + ": " + errnoText(errno));
  }
  UniqueFd errorRead(errorPipe[0]), errorWrite(errorPipe[1]);

  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    if (err == EAGAIN || err == ENOMEM) {
      return overloaded("fork failed while spawning " + argv[0] + ": " + errnoText(err));
    }
    return internalError("fork failed while spawning " + argv[0] + ": " + errnoText(err));
  }
  if (pid == 0) {
    childMain(program.c_str(), args.data(), workdir.empty() ? nullptr : workdir.c_str(),
              stdinFd.get(), stdoutFd, stderrFd, errorWrite.get(), options, parent);
  }
  // Also set in the parent so a kill of the group right after spawn cannot race setpgid.
  ::setpgid(pid, pid);
  Subprocess child(pid);
  errorWrite.reset();

  ChildFailure failure{};
  ssize_t got;
  do {
    got = ::read(errorRead.get(), &failure, sizeof(failure));
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return child;  // EOF: execve closed the pipe, the program is running

  child.kill();
  std::string message = (failure.stage == 1 ? "cannot execute " : "cannot set up child for ") +
                        program + ": " + errnoText(failure.err);
  if (failure.stage == 0 && !workdir.empty() && failure.err == ENOENT) {
    message += " (working directory " + workdir + ")";
  }
  if (failure.err == ENOENT) return notFound(message);
  if (failure.err == EACCES || failure.err == EPERM) return permissionDenied(message);
  if (failure.err == ENOMEM) return overloaded(message);
  return invalidArgument(message);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), exit_(std::move(other.exit_)) {
  other.exit_.reset();
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (running()) kill();
    pid_ = std::exchange(other.pid_, -1);
    exit_ = std::move(other.exit_);
    other.exit_.reset();
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (running()) kill();
}

std::optional<ExitStatus> Subprocess::poll() {
  if (exit_ || pid_ <= 0) return exit_;
  int raw = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &raw, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == pid_) {
    exit_ = fromWaitStatus(raw);
  } else if (got < 0 && errno == ECHILD) {
    // Someone else reaped it (SIGCHLD ignored); the status is lost but it is gone.
    exit_ = ExitStatus{};
  }
  return exit_;
}

Result<ExitStatus> Subprocess::waitFor(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return invalidArgument("waitFor on a Subprocess that owns no child");
  auto deadline = Clock::now() + timeout;
  UniqueFd pidfd(openPidfd(pid_));
  auto sleepStep = std::chrono::milliseconds(1);
  while (true) {
    if (auto status = poll()) return *status;
    int left = remainingMs(deadline);
    if (left == 0) {
      return timeoutError("process " + std::to_string(pid_) + " still running after " +
                          std::to_string(timeout.count()) + " ms");
    }
    if (pidfd.get() >= 0) {
      struct pollfd entry {
        pidfd.get(), POLLIN, 0
      };
      ::poll(&entry, 1, left);  // readable once the child has exited; EINTR just loops
    } else {
      std::this_thread::sleep_for(std::min(sleepStep, std::chrono::milliseconds(left)));
      sleepStep = std::min(sleepStep * 2, std::chrono::milliseconds(20));
    }
  }
}

ExitStatus Subprocess::kill() {
  if (pid_ <= 0) return ExitStatus{};
  if (exit_) return *exit_;
  // The whole group: compilers fork helpers that must not outlive the session.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int raw = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &raw, 0);
  } while (got < 0 && errno == EINTR);
  exit_ = got == pid_ ? fromWaitStatus(raw) : ExitStatus{};
  return *exit_;
}

bool drainPipe(int fd, std::string& sink, std::size_t limit, std::uint64_t* total) {
  char buffer[16384];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(got),
                                               limit > sink.size() ? limit - sink.size() : 0);
      sink.append(buffer, keep);  // the rest is read and dropped so the child never blocks
      if (total != nullptr) *total += static_cast<std::uint64_t>(got);
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

Result<ProcessOutput> runSubprocess(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    const SubprocessOptions& options,
                                    std::size_t captureLimitBytes) {
  auto deadline = Clock::now() + timeout;
  int outPipe[2], errPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0) return internalError("pipe2: " + errnoText(errno));
  UniqueFd outRead(outPipe[0]), outWrite(outPipe[1]);
  if (::pipe2(errPipe, O_CLOEXEC) != 0) return internalError("pipe2: " + errnoText(errno));
  UniqueFd errRead(errPipe[0]), errWrite(errPipe[1]);
  ::fcntl(outRead.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(errRead.get(), F_SETFL, O_NONBLOCK);

  KILN_ASSIGN_OR_RETURN(
      Subprocess child,
      Subprocess::spawnImpl(argv, options,
                            Subprocess::StdioOverride{outWrite.get(), errWrite.get()}));
  outWrite.reset();
  errWrite.reset();

  ProcessOutput output;
  bool outOpen = true, errOpen = true;
  // Watching the pidfd too means a grandchild that keeps the pipes open cannot
  // hold us past the child's exit.
  UniqueFd pidfd(openPidfd(child.pid()));
  while (true) {
    std::optional<ExitStatus> exited = child.poll();
    if (exited || (!outOpen && !errOpen)) {
      if (outOpen) drainPipe(outRead.get(), output.stdoutText, captureLimitBytes);
      if (errOpen) drainPipe(errRead.get(), output.stderrText, captureLimitBytes);
      if (!exited) {
        auto waited = child.waitFor(std::chrono::milliseconds(remainingMs(deadline)));
        if (!waited.ok()) break;
        exited = *waited;
      }
      output.status = *exited;
      return output;
    }
    int left = remainingMs(deadline);
    if (left == 0) break;
    struct pollfd fds[3];
    nfds_t count = 0;
    int outIndex = -1, errIndex = -1;
    if (outOpen) outIndex = static_cast<int>(count), fds[count++] = {outRead.get(), POLLIN, 0};
    if (errOpen) errIndex = static_cast<int>(count), fds[count++] = {errRead.get(), POLLIN, 0};
    if (pidfd.get() >= 0) fds[count++] = {pidfd.get(), POLLIN, 0};
    // Without a pidfd, wake up now and then to notice an exit.
    int wait = pidfd.get() >= 0 ? left : std::min(left, 20);
    if (::poll(fds, count, wait) < 0 && errno != EINTR) {
      return internalError("poll failed while running " + commandText(argv) + ": " +
                           errnoText(errno));
    }
    if (outIndex >= 0 && fds[outIndex].revents != 0) {
      outOpen = drainPipe(outRead.get(), output.stdoutText, captureLimitBytes);
    }
    if (errIndex >= 0 && fds[errIndex].revents != 0) {
      errOpen = drainPipe(errRead.get(), output.stderrText, captureLimitBytes);
    }
  }
  ExitStatus killed = child.kill();
  return timeoutError("`" + commandText(argv) + "` did not finish within " +
                      std::to_string(timeout.count()) + " ms and was killed (" + killed.describe() +
                      ")");
}

int killChildProcessGroups() {
  const pid_t self = ::getpid();
  int found = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // "pid (comm) state ppid ...": the command may hold spaces and ')'.
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    long parent = 0;
    if (!(rest >> state >> parent) || parent != self) continue;
    const auto child = static_cast<pid_t>(std::stol(name));
    ::kill(-child, SIGKILL);
    ::kill(child, SIGKILL);
    ++found;
  }
  return found;
}

}  // namespace kiln
