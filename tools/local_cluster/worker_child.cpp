#include "tools/local_cluster/worker_child.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/base/exit_codes.h"
#include "common/process/signals.h"
#include "common/process/working_directory.h"
#include "common/security/zap_authenticator.h"
#include "tools/local_cluster/builtin_types.h"
#include "worker/worker_cli.h"

namespace kiln {

namespace {

constexpr auto kServeWithin = std::chrono::seconds(60);
// A child that dies at once, again and again (a broken setup), is not
// forked in a tight loop.
constexpr auto kPauseBeforeRetry = std::chrono::seconds(1);

// The parent's descriptors (its sockets, ZeroMQ's internals) must not stay
// open in the child: the parent's peers would not see them close.
void closeDescriptorsExcept(int keep) {
  std::vector<int> open;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(dir);
    while (dirent* entry = ::readdir(dir)) {
      const int fd = std::atoi(entry->d_name);
      if (fd > 2 && fd != own && fd != keep) open.push_back(fd);
    }
    ::closedir(dir);
  }
  for (int fd : open) ::close(fd);
}

void writeLine(int fd, const std::string& line) {
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::write(fd, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

// The child: one worker until it is killed, or until compile work crashed
// in it (then it answers what ran and exits to be replaced). Tells the
// parent where it serves, or why it cannot, on `reportFd`.
[[noreturn]] void runChild(const WorkerChildSetup& setup, pid_t parent, int reportFd) {
  closeDescriptorsExcept(reportFd);
  // The parent gone, this worker stops as on its SIGTERM: its contexts
  // shut down and its working directory goes.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(0);  // the parent died before prctl
  // Whatever the parent's process does with signals (a Python interpreter
  // catches SIGINT) is not this worker's business: a terminal's Ctrl-C,
  // which reaches the whole process group, is the parent's to act on; the
  // parent stops this worker with SIGTERM (WorkerChild's destructor).
  for (int signal : {SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
  ::prctl(PR_SET_NAME, "kiln-worker", 0, 0, 0);
  // Before the first thread of this process (ZeroMQ's, the pool's).
  StopOnSignal signals(stopBound(setup.drain));
  try {
    zmq::context_t zmq(1);
    Logger logger = makeLogger(setup.name, setup.log);
    SessionTypeRegistry types;
    if (setup.registerTypes) {
      setup.registerTypes(types);
    } else {
      registerBuiltinSessionTypes(types);
    }
    WorkerConfig config = setup.config;
    config.exitWhenDamaged = true;
    std::unique_ptr<ZapAuthenticator> authenticator;
    if (setup.keys) {
      auto started = ZapAuthenticator::start(zmq, *setup.keys, setup.authorizedKeys, logger);
      if (!started.ok()) {
        writeLine(reportFd, "error " + started.status().toString() + "\n");
        ::_exit(1);
      }
      authenticator = std::move(started).value();
      config.security = ServerSecurity{*setup.keys, authenticator.get()};
    }
    SteadyClock clock;
    auto server = WorkerServer::create(config, types, zmq, clock, logger);
    if (!server.ok()) {
      writeLine(reportFd, "error " + server.status().toString() + "\n");
      ::_exit(1);
    }
    const auto now = [directory = (*server)->workingDirectory(), logger] {
      stopAtOnce(directory, logger);
    };
    signals.onSignal([&server, &setup] { (*server)->drain(setup.drain); }, now);
    writeLine(reportFd, fmt::format("{} {} {}\n", (*server)->endpoint(), (*server)->metricsPort(),
                                    (*server)->workingDirectory().string()));
    ::close(reportFd);
    (*server)->run();
    signals.onSignal({}, now);  // the server goes before the signal thread
    if ((*server)->damage()) {
      // As `kiln worker` does (WorkerServer::damage()): the last answers
      // leave with the context, then the process ends without destructors.
      server->release();
      authenticator.reset();
      zmq.close();
      logger->flush();
      std::fflush(nullptr);
      ::_exit(kExitRestartAfterCaughtCrash);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: the worker's child process failed: %s\n", setup.name.c_str(),
                 e.what());
    std::fflush(nullptr);
    ::_exit(1);
  }
  ::_exit(0);
}

// Reads the child's one line, within kServeWithin.
std::string readReport(int fd) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + kServeWithin;
  char chunk[512];
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd item{fd, POLLIN, 0};
    const int ready = ::poll(&item, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(chunk, static_cast<std::size_t>(n));
  }
  const auto end = line.find('\n');
  return end == std::string::npos ? std::string() : line.substr(0, end);
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<std::unique_ptr<WorkerChild>> WorkerChild::start(WorkerChildSetup setup) {
  std::unique_ptr<WorkerChild> child(new WorkerChild(std::move(setup)));
  KILN_ASSIGN_OR_RETURN(child->serving_, child->spawn());
  child->supervisor_ = std::thread([raw = child.get()] { raw->supervise(); });
  return child;
}

WorkerChild::~WorkerChild() {
  stopping_ = true;
  {
    // It drains (WorkerServer::drain) and removes its working directory.
    std::lock_guard lock(mutex_);
    if (serving_.pid > 0) ::kill(serving_.pid, SIGTERM);
  }
  // Its own signal thread ends it within stopBound(); past that (stopped,
  // or stuck before that thread ran), it is killed.
  const auto killAt =
      std::chrono::steady_clock::now() + stopBound(setup_.drain) + std::chrono::seconds(1);
  while (!supervisorDone_.load() && std::chrono::steady_clock::now() < killAt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!supervisorDone_.load()) {
    std::lock_guard lock(mutex_);
    if (serving_.pid > 0) ::kill(serving_.pid, SIGKILL);
  }
  if (supervisor_.joinable()) supervisor_.join();
  if (serving_.pid > 0) reap(serving_.pid);  // no zombie left behind
  forget(serving_);
}

void WorkerChild::forget(const Serving& ended) {
  // Gone already when it stopped cleanly; left behind when it was killed.
  if (!ended.workingDirectory.empty()) removeWorkingDirectoryNow(ended.workingDirectory);
}

std::string WorkerChild::endpoint() const {
  std::lock_guard lock(mutex_);
  return serving_.endpoint;
}

int WorkerChild::metricsPort() const {
  std::lock_guard lock(mutex_);
  return serving_.metricsPort;
}

pid_t WorkerChild::pid() const {
  std::lock_guard lock(mutex_);
  return serving_.pid;
}

Result<WorkerChild::Serving> WorkerChild::spawn() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return internalError(
        fmt::format("cannot start {}: pipe: {}", setup_.name, std::strerror(errno)));
  }
  // Buffered output would otherwise be written twice, once by each process.
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return internalError(
        fmt::format("cannot fork the process of {}: {}", setup_.name, std::strerror(error)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    runChild(setup_, parent, fds[1]);
  }
  ::close(fds[1]);
  if (setup_.onProcessStarted) setup_.onProcessStarted(pid);
  const std::string line = readReport(fds[0]);
  ::close(fds[0]);
  if (line.empty() || line.starts_with("error ")) {
    ::kill(pid, SIGKILL);
    reap(pid);
    return internalError(
        fmt::format("{}'s process did not start serving{}", setup_.name,
                    line.empty() ? " (it exited, or took over a minute)" : ": " + line.substr(6)));
  }
  Serving serving;
  serving.pid = pid;
  const auto space = line.find(' ');
  serving.endpoint = line.substr(0, space);
  if (space != std::string::npos) {
    serving.metricsPort = std::atoi(line.c_str() + space + 1);
    const auto second = line.find(' ', space + 1);
    if (second != std::string::npos) serving.workingDirectory = line.substr(second + 1);
  }
  return serving;
}

void WorkerChild::supervise() {
  supervisePids();
  supervisorDone_ = true;
}

void WorkerChild::supervisePids() {
  while (!stopping_.load()) {
    reap(pid());
    if (stopping_.load()) return;
    {
      std::lock_guard lock(mutex_);
      forget(serving_);  // a crashed or killed child's
    }
    auto next = spawn();
    while (!next.ok() && !stopping_.load()) {
      std::fprintf(stderr, "%s\n", next.status().toString().c_str());
      std::this_thread::sleep_for(kPauseBeforeRetry);
      next = spawn();
    }
    if (!next.ok()) return;
    std::lock_guard lock(mutex_);
    serving_ = *next;
    ++restarts_;
    // Stopped while it started: the destructor killed its predecessor only.
    if (stopping_.load()) ::kill(serving_.pid, SIGKILL);
  }
}

}  // namespace kiln
