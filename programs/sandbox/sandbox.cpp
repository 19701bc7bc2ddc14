#include "programs/sandbox/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/base/unique_fd.h"
#include "common/process/working_directory.h"
#include "programs/sandbox/sandbox_child.h"

namespace kiln::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// The run's private directory (removed on every path out, or by the next
// run after a crash): readable by the namespace's user (nobody, for a root
// worker), who runs the program from it and mounts the scratch tmpfs on
// its work/.
Result<WorkingDirectory> makeRunDirectory(const std::filesystem::path& root) {
  KILN_ASSIGN_OR_RETURN(WorkingDirectory directory, WorkingDirectory::create(root, "kiln-sandbox"));
  std::error_code error;
  std::filesystem::permissions(directory.path(), std::filesystem::perms(0755), error);
  const std::filesystem::path work = directory.path() / "work";
  if (!error) std::filesystem::create_directory(work, error);
  if (!error) std::filesystem::permissions(work, std::filesystem::perms(0777), error);
  if (error) {
    return internalError(fmt::format("cannot prepare the sandbox directory {}: {}",
                                     directory.path().string(), error.message()));
  }
  return directory;
}

// O_CLOEXEC: a child another thread forks meanwhile (a second sandbox run, a
// linker) must not inherit the descriptor. It would hold the program copy
// open for writing for its whole life, and executing the copy would fail
// with ETXTBSY ("Text file busy"), as two threads validating at once saw.
Status writeFile(const std::filesystem::path& path, std::string_view bytes, std::uint32_t mode) {
  UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  bool written = out.get() >= 0;
  for (std::size_t done = 0; written && done < bytes.size();) {
    const ssize_t n = ::write(out.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    done += written ? static_cast<std::size_t>(n) : 0;
  }
  written = written && ::close(out.release()) == 0;
  std::error_code error;
  if (written) std::filesystem::permissions(path, std::filesystem::perms(mode), error);
  if (!written || error) {
    return internalError(fmt::format("cannot write {} for the sandbox", path.string()));
  }
  return okStatus();
}

struct Pipe {
  UniqueFd read, write;
  static Result<Pipe> make(bool nonBlockingRead) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return internalError(fmt::format("pipe2 failed: {}", std::strerror(errno)));
    }
    if (nonBlockingRead) ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  }
};

// argv or envp as execve takes them, pointing into `strings`.
std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// Reads whole records from the non-blocking report pipe.
bool drainReports(int fd, std::string& pending, std::vector<ReportRecord>& records) {
  std::uint64_t ignored = 0;
  const bool open = drainPipe(fd, pending, 1 << 20, &ignored);
  while (pending.size() >= sizeof(ReportRecord)) {
    ReportRecord record;
    std::memcpy(&record, pending.data(), sizeof(record));
    records.push_back(record);
    pending.erase(0, sizeof(record));
  }
  return open;
}

int openPidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

Result<Sandbox> Sandbox::create(SandboxOptions options) {
  std::error_code error;
  if (!std::filesystem::is_directory(options.scratchRoot, error)) {
    return invalidArgument(fmt::format("the sandbox's scratch root {} is not a directory",
                                       options.scratchRoot.string()));
  }
  if (!options.useNamespaces) return Sandbox(std::move(options), Isolation::kProcessGroup);
  // Probe: the smallest program there is, in namespaces.
  Sandbox probe(options, Isolation::kNamespaces);
  SandboxRun run;
  run.program = "/bin/true";
  SandboxLimits limits;
  limits.wallTime = std::chrono::milliseconds(10'000);
  auto outcome = probe.run(run, limits);
  if (outcome.ok() && outcome->runs.size() == 1 && outcome->runs[0].status.success()) {
    return probe;
  }
  if (options.requireNamespaces) {
    return permissionDenied(fmt::format(
        "this host gives the sandbox no namespaces ({}), and the operator requires them "
        "(--sandbox-require-namespaces): run the worker as root, or allow unprivileged user "
        "namespaces (sysctl kernel.unprivileged_userns_clone=1)",
        outcome.ok() ? "the probe failed" : outcome.status().message()));
  }
  return Sandbox(std::move(options), Isolation::kProcessGroup);
}

std::string Sandbox::describeIsolation() const {
  const std::string files =
      landlockAbi_ > 0
          ? fmt::format("; files: Landlock ABI {}, system libraries and its scratch directory only",
                        landlockAbi_)
          : std::string(options_.restrictFiles
                            ? "; files: NO Landlock on this kernel, so the program can read every "
                              "host file its user may (a Linux 5.13+ kernel with Landlock enabled "
                              "closes that)"
                            : "; files: not restricted (Landlock turned off)");
  if (isolation_ == Isolation::kProcessGroup) {
    return "a process group with resource limits (no namespaces on this host: the program "
           "shares the host's network" +
           std::string(landlockAbi_ > 0 ? ")" : " and file system)") + files;
  }
  return fmt::format("namespaces (user, mount, network, pid, ipc, uts) as user {}{}",
                     ::geteuid() == 0 ? options_.unprivilegedId : ::geteuid(), files);
}

Result<SandboxOutcome> Sandbox::run(const SandboxRun& run, const SandboxLimits& limits) const {
  KILN_RETURN_IF_ERROR(checkLimits(limits));
  if (run.cpu >= CPU_SETSIZE) {
    return invalidArgument(fmt::format("cpu {} is beyond the CPUs a process can name", run.cpu));
  }
  // Room for --runtime-max-runs (at most 1000) and the unmeasured first run.
  if (run.repeats < 1 || run.repeats > 10'000) {
    return invalidArgument(fmt::format("repeats must be in [1, 10000], got {}", run.repeats));
  }
  std::ifstream source(run.program, std::ios::binary);
  if (!source) return notFound(fmt::format("no program {} to run", run.program.string()));
  const std::string image((std::istreambuf_iterator<char>(source)),
                          std::istreambuf_iterator<char>());
  KILN_ASSIGN_OR_RETURN(WorkingDirectory directory, makeRunDirectory(options_.scratchRoot));
  const std::filesystem::path programPath = directory.path() / "program";
  const std::filesystem::path stdinPath = directory.path() / "stdin";
  KILN_RETURN_IF_ERROR(writeFile(programPath, image, 0755));
  KILN_RETURN_IF_ERROR(writeFile(stdinPath, run.stdinBytes, 0644));

  const bool namespaces = isolation_ == Isolation::kNamespaces;
  std::vector<std::string> argvStrings{"program"};
  argvStrings.insert(argvStrings.end(), run.args.begin(), run.args.end());
  std::vector<std::string> envStrings{"PATH=/usr/bin:/bin", "LC_ALL=C"};
  envStrings.insert(envStrings.end(), run.environment.begin(), run.environment.end());
  std::vector<char*> argv = pointers(argvStrings);
  std::vector<char*> envp = pointers(envStrings);
  const std::string programText = programPath.string();
  const std::string stdinText = stdinPath.string();
  const std::string workText = (directory.path() / "work").string();
  const std::string tmpfsOptions = fmt::format("size={},mode=0777", limits.scratchBytes);
  const bool root = ::geteuid() == 0;
  const std::string uidMap = fmt::format("0 {} 1\n", root ? options_.unprivilegedId : ::geteuid());
  const std::string gidMap = fmt::format("0 {} 1\n", root ? options_.unprivilegedId : ::getegid());

  KILN_ASSIGN_OR_RETURN(Pipe out, Pipe::make(true));
  KILN_ASSIGN_OR_RETURN(Pipe err, Pipe::make(true));
  KILN_ASSIGN_OR_RETURN(Pipe report, Pipe::make(true));
  KILN_ASSIGN_OR_RETURN(Pipe sync, Pipe::make(false));

  ChildPlan plan;
  plan.namespaces = namespaces;
  plan.program = programText.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.stdinPath = stdinText.c_str();
  plan.workDirectory = workText.c_str();
  plan.tmpfsOptions = tmpfsOptions.c_str();
  plan.uidMap = uidMap.c_str();
  plan.gidMap = gidMap.c_str();
  plan.denySetgroups = !root;
  plan.stdoutFd = out.write.get();
  plan.stderrFd = err.write.get();
  plan.reportFd = report.write.get();
  plan.syncRead = sync.read.get();
  plan.syncWrite = sync.write.get();
  plan.repeats = run.repeats;
  plan.wallMillis = limits.wallTime.count();
  plan.memoryBytes = limits.memoryBytes;
  plan.limitAddressSpace = run.limitAddressSpace;
  plan.cpu = run.cpu;
  plan.processes = limits.processes;
  plan.fileBytes = limits.scratchBytes;
  plan.parentPid = ::getpid();
  plan.files = FileView{landlockAbi_, plan.program, plan.workDirectory};

  const pid_t keeper = ::fork();
  if (keeper < 0) {
    return overloaded(fmt::format("fork failed for the sandbox: {}", std::strerror(errno)));
  }
  if (keeper == 0) keeperMain(plan);
  ::setpgid(keeper, keeper);  // as the keeper does, so that a kill right away reaches it
  out.write.reset();
  err.write.reset();
  report.write.reset();
  sync.read.reset();
  sync.write.reset();

  SandboxOutcome outcome;
  outcome.isolation = isolation_;
  std::vector<ReportRecord> records;
  std::string pendingReports;
  bool outOpen = true, errOpen = true, reportOpen = true;
  // Each run has its own limit inside; this bounds the whole, set-up included.
  const auto deadline = Clock::now() + run.repeats * (limits.wallTime + std::chrono::seconds(2)) +
                        std::chrono::seconds(10);
  UniqueFd keeperFd(openPidfd(keeper));
  bool keeperEnded = false;
  int keeperStatus = 0;
  while (outOpen || errOpen || reportOpen) {
    if (!keeperEnded && ::waitpid(keeper, &keeperStatus, WNOHANG) == keeper) keeperEnded = true;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    struct pollfd fds[4];
    nfds_t count = 0;
    if (outOpen) fds[count++] = {out.read.get(), POLLIN, 0};
    if (errOpen) fds[count++] = {err.read.get(), POLLIN, 0};
    if (reportOpen) fds[count++] = {report.read.get(), POLLIN, 0};
    if (!keeperEnded && keeperFd.get() >= 0) fds[count++] = {keeperFd.get(), POLLIN, 0};
    ::poll(fds, count, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
    if (outOpen)
      outOpen =
          drainPipe(out.read.get(), outcome.stdoutText, limits.outputBytes, &outcome.stdoutBytes);
    if (errOpen)
      errOpen =
          drainPipe(err.read.get(), outcome.stderrText, limits.outputBytes, &outcome.stderrBytes);
    if (reportOpen) reportOpen = drainReports(report.read.get(), pendingReports, records);
  }
  // Whatever is still there (only when the deadline passed) dies with its group.
  ::kill(-keeper, SIGKILL);
  if (!keeperEnded) {
    while (::waitpid(keeper, &keeperStatus, 0) < 0 && errno == EINTR) {
    }
  }
  for (const ReportRecord& record : records) {
    if (record.kind == ReportRecord::kSetupFailed) {
      return internalError(fmt::format("the sandbox failed {}: {}", setupStageName(record.stage),
                                       std::strerror(record.err)));
    }
    if (record.kind == ReportRecord::kExecFailed) {
      return invalidArgument(
          fmt::format("the sandbox could not execute the program: {}", std::strerror(record.err)));
    }
    RunRecord one;
    one.status = fromWaitStatus(record.waitStatus);
    one.wallTime = std::chrono::nanoseconds(record.wallNanos);
    one.peakRssBytes = static_cast<std::uint64_t>(record.peakRssKib) * 1024;
    one.timedOut = record.timedOut != 0;
    one.leftoverProcesses = static_cast<std::uint32_t>(record.leftoverProcesses);
    outcome.runs.push_back(one);
  }
  if (outcome.runs.empty()) {
    return internalError(fmt::format(
        "the sandbox ended without running the program ({})",
        Clock::now() >= deadline ? "its set-up did not finish in time" : "its keeper died"));
  }
  return outcome;
}

}  // namespace kiln::sandbox
