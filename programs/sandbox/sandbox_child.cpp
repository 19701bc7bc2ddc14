// After fork: only system calls, on data the parent prepared (ChildPlan).
// The worker is multithreaded, so nothing here may take a lock another
// thread could have held at fork: no malloc, no stdio, no logging.
#include "programs/sandbox/sandbox_child.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "common/process/child_setup.h"

namespace kiln::sandbox {
namespace {

enum Stage : std::int32_t {
  kStageClone = 1,
  kStageMaps,
  kStageWaitMaps,
  kStageIdentity,
  kStageMountsPrivate,
  kStageReadOnly,
  kStageTmpfs,
  kStageFork,
  kStageStdio,
  kStageWorkDirectory,
  kStageLimits,
  kStagePrivileges,
  kStageSeccomp,
  kStageCpu,
  kStageFiles,
};

void writeRecord(int fd, const ReportRecord& record) {
  ssize_t ignored = ::write(fd, &record, sizeof(record));
  (void)ignored;
}

[[noreturn]] void failSetup(const ChildPlan& plan, Stage stage) {
  ReportRecord record;
  record.kind = ReportRecord::kSetupFailed;
  record.stage = stage;
  record.err = errno;
  writeRecord(plan.reportFd, record);
  ::_exit(127);
}

std::int64_t nowNanos() {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// "/proc/<pid>/<file>" into `path` (64 bytes), without malloc.
void procPath(char (&path)[64], pid_t pid, const char* file) {
  std::memcpy(path, "/proc/", 6);
  std::size_t at = 6;
  char digits[16];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0);
  while (count > 0) path[at++] = digits[--count];
  path[at++] = '/';
  for (const char* c = file; *c != '\0' && at + 1 < sizeof(path); ++c) path[at++] = *c;
  path[at] = '\0';
}

// Writes `text` into /proc/<pid>/<file>.
bool writeProcFile(pid_t pid, const char* file, const char* text) {
  char path[64];
  procPath(path, pid, file);
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::size_t length = std::strlen(text);
  const bool ok = ::write(fd, text, length) == static_cast<ssize_t>(length);
  ::close(fd);
  return ok;
}

void setLimit(const ChildPlan& plan, int resource, rlim_t soft, rlim_t hard) {
  struct rlimit limit {};
  limit.rlim_cur = soft;
  limit.rlim_max = hard;
  if (::setrlimit(resource, &limit) != 0) failSetup(plan, kStageLimits);
}

// A program that opens a socket, traces, mounts or enters namespaces is
// killed (SIGSYS): the clearest way to name what it tried.
void installSeccomp(const ChildPlan& plan) {
  constexpr unsigned kKill = SECCOMP_RET_KILL_PROCESS;
  const auto nr = static_cast<unsigned>(offsetof(struct seccomp_data, nr));
  const auto arch = static_cast<unsigned>(offsetof(struct seccomp_data, arch));
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arch),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kKill),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr),
      // x32 system calls (the same numbers with bit 30 set).
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kKill),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 11, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 10, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 9, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 8, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount, 7, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_umount2, 6, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, kKill),
  };
  struct sock_fprog program {};
  program.len = static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0]));
  program.filter = filter;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) failSetup(plan, kStageSeccomp);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    failSetup(plan, kStageSeccomp);
  }
}

// Root of the namespace has every capability in it: the program gets none,
// and keeps none across execve (root would regain them there).
void dropPrivileges(const ChildPlan& plan) {
  constexpr unsigned long kSecureBits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
                                        SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                                        SECBIT_KEEP_CAPS_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, kSecureBits, 0, 0, 0) != 0) {
    failSetup(plan, kStagePrivileges);
  }
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  struct __user_cap_header_struct header {};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  struct __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) != 0) failSetup(plan, kStagePrivileges);
}

// `fd` as descriptor `target`, inherited by execve.
bool moveTo(int fd, int target) {
  if (fd < 0) return false;
  if (fd == target) return ::fcntl(target, F_SETFD, 0) == 0;
  return ::dup2(fd, target) == target;
}

[[noreturn]] void programMain(const ChildPlan& plan, bool firstRun) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Without namespaces the program's group is what init kills afterwards.
  if (!plan.namespaces) ::setpgid(0, 0);
  const int in = ::open(plan.stdinPath, O_RDONLY | O_CLOEXEC);
  const int out = firstRun ? plan.stdoutFd : ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const int err = firstRun ? plan.stderrFd : out;
  if (!moveTo(in, 0) || !moveTo(out, 1) || !moveTo(err, 2)) failSetup(plan, kStageStdio);
  if (::chdir(plan.workDirectory) != 0) failSetup(plan, kStageWorkDirectory);
  if (plan.cpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(plan.cpu, &one);
    if (::sched_setaffinity(0, sizeof(one), &one) != 0) failSetup(plan, kStageCpu);
  }
  setLimit(plan, RLIMIT_CORE, 0, 0);
  setLimit(plan, RLIMIT_NOFILE, 256, 256);
  setLimit(plan, RLIMIT_FSIZE, plan.fileBytes, plan.fileBytes);
  // CPU time backs up the wall clock for a program init cannot see spinning.
  const auto cpuSeconds = static_cast<rlim_t>(plan.wallMillis / 1000 + 2);
  setLimit(plan, RLIMIT_CPU, cpuSeconds, cpuSeconds + 1);
  if (plan.limitAddressSpace) setLimit(plan, RLIMIT_AS, plan.memoryBytes, plan.memoryBytes);
  // Counted per user namespace: only the sandbox's own processes count.
  if (plan.namespaces) setLimit(plan, RLIMIT_NPROC, plan.processes, plan.processes);
  if (plan.namespaces) dropPrivileges(plan);
  if (plan.files.abi > 0 &&
      (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || !restrictFiles(plan.files))) {
    failSetup(plan, kStageFiles);
  }
  installSeccomp(plan);
  ::execve(plan.program, plan.argv, plan.envp);
  ReportRecord record;
  record.kind = ReportRecord::kExecFailed;
  record.err = errno;
  writeRecord(plan.reportFd, record);
  ::_exit(127);
}

// The parent of `pid` from /proc/<pid>/stat ("pid (comm) state ppid ..."),
// read without malloc; 0 when it cannot be read.
pid_t parentOf(pid_t pid) {
  char path[64];
  procPath(path, pid, "stat");
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[512];
  const ssize_t got = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (got <= 0) return 0;
  text[got] = '\0';
  // The command may hold spaces and ')': the state follows the last ')'.
  const char* close = std::strrchr(text, ')');
  if (close == nullptr || close[1] == '\0' || close[2] == '\0') return 0;
  const char* c = close + 4;  // ") S " then the parent
  pid_t parent = 0;
  while (*c >= '0' && *c <= '9') parent = parent * 10 + (*c++ - '0');
  return parent;
}

// Calls `visit(pid)` for every process in /proc, or in it whose parent is
// `parent` (0: any); how many it visited.
template <typename Visit>
std::int32_t forEachProcess(pid_t parent, Visit visit) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  std::int32_t count = 0;
  while (struct dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    pid_t pid = 0;
    for (const char* c = entry->d_name; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
    if (parent != 0 && parentOf(pid) != parent) continue;
    visit(pid);
    ++count;
  }
  ::closedir(proc);
  return count;
}

// Waits for `pid` until `deadlineNanos`; true when it ended in time.
bool waitUntil(pid_t pid, std::int64_t deadlineNanos) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      if (pidfd >= 0) ::close(pidfd);
      return true;
    }
    const std::int64_t left = deadlineNanos - nowNanos();
    if (left <= 0) {
      if (pidfd >= 0) ::close(pidfd);
      return false;
    }
    const int waitMillis = static_cast<int>(left / 1'000'000 + 1);
    if (pidfd >= 0) {
      struct pollfd entry {
        pidfd, POLLIN, 0
      };
      ::poll(&entry, 1, waitMillis);
    } else {
      struct timespec nap {
        0, 1'000'000
      };
      ::nanosleep(&nap, nullptr);
    }
  }
}

// Kills every process of the run (the program too, if it still runs); how
// many there were. Reaps none of them.
std::int32_t killRun(const ChildPlan& plan, pid_t program, bool procMounted) {
  if (plan.namespaces) {
    // The namespace's own /proc lists only its processes (init is 1).
    const std::int32_t alive = procMounted ? forEachProcess(0, [](pid_t) {}) - 1 : 0;
    // As PID 1, kill(-1) reaches every other process of the namespace.
    return ::kill(-1, SIGKILL) == 0 && alive <= 0 ? 1 : std::max(alive, 0);
  }
  // Without namespaces: the program's group, and every process that was
  // orphaned to us (the keeper is their subreaper), even after setsid().
  const bool group = ::kill(-program, SIGKILL) == 0;
  const std::int32_t children = forEachProcess(::getpid(), [](pid_t pid) { ::kill(pid, SIGKILL); });
  return std::max<std::int32_t>(children, group ? 1 : 0);
}

// Reaps every child left after the program was reaped; without namespaces
// orphans of the killed keep arriving, so it kills and reaps until none is.
void reapRun(const ChildPlan& plan, pid_t program) {
  for (int round = 0; round < 64; ++round) {
    while (::waitpid(-1, nullptr, __WALL) > 0 || errno == EINTR) {
    }
    if (plan.namespaces || killRun(plan, program, false) == 0) return;
  }
}

[[noreturn]] void initMain(const ChildPlan& plan) {
  bool procMounted = false;
  if (plan.namespaces) {
    // Our copy of the write end must not keep the pipe open if the keeper dies.
    ::close(plan.syncWrite);
    char go = 0;
    if (::read(plan.syncRead, &go, 1) != 1) ::_exit(127);  // the keeper is gone
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Become the namespace's root: the unprivileged user outside.
    if (::setresgid(0, 0, 0) != 0 || ::setresuid(0, 0, 0) != 0) failSetup(plan, kStageIdentity);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      failSetup(plan, kStageMountsPrivate);
    }
    struct mount_attr readOnly {};
    // Not nodev: /dev/null and friends stay usable (read-only does not stop
    // writing to a device).
    readOnly.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID;
    if (::mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &readOnly, sizeof(readOnly)) != 0) {
      failSetup(plan, kStageReadOnly);
    }
    if (::mount("tmpfs", plan.workDirectory, "tmpfs", MS_NOSUID | MS_NODEV, plan.tmpfsOptions) !=
        0) {
      failSetup(plan, kStageTmpfs);
    }
    // This namespace's own /proc, where its processes can be counted. Some
    // hosts refuse it (a /proc with parts hidden); counting is then coarser.
    procMounted = ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
  }
  for (unsigned repeat = 0; repeat < plan.repeats; ++repeat) {
    const std::int64_t began = nowNanos();
    const pid_t program = ::fork();
    if (program < 0) failSetup(plan, kStageFork);
    if (program == 0) programMain(plan, repeat == 0);
    ReportRecord record;
    record.timedOut = waitUntil(program, began + plan.wallMillis * 1'000'000) ? 0 : 1;
    if (record.timedOut != 0) {
      record.leftoverProcesses = killRun(plan, program, procMounted);
      ::kill(program, SIGKILL);
    }
    int status = 0;
    struct rusage usage {};
    while (::wait4(program, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    record.wallNanos = nowNanos() - began;
    record.waitStatus = status;
    record.peakRssKib = usage.ru_maxrss;
    // What the program left running (daemons, a fork bomb's children).
    if (record.timedOut == 0) record.leftoverProcesses = killRun(plan, program, procMounted);
    reapRun(plan, program);
    writeRecord(plan.reportFd, record);
    const bool succeeded = record.timedOut == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!succeeded) break;
  }
  ::_exit(0);
}

}  // namespace

const char* setupStageName(std::int32_t stage) {
  switch (stage) {
    case kStageClone:
      return "creating the namespaces";
    case kStageMaps:
      return "mapping the namespace's user";
    case kStageWaitMaps:
      return "waiting for the user map";
    case kStageIdentity:
      return "taking the namespace's user";
    case kStageMountsPrivate:
      return "making mounts private";
    case kStageReadOnly:
      return "making the host read-only";
    case kStageTmpfs:
      return "mounting the scratch directory";
    case kStageFork:
      return "starting the program";
    case kStageStdio:
      return "connecting stdin and stdout";
    case kStageWorkDirectory:
      return "entering the scratch directory";
    case kStageLimits:
      return "setting the resource limits";
    case kStagePrivileges:
      return "dropping privileges";
    case kStageSeccomp:
      return "installing the system call filter";
    case kStageCpu:
      return "pinning the program to its CPU";
    case kStageFiles:
      return "restricting the files it may open (Landlock)";
    default:
      return "setting up";
  }
}

void keeperMain(const ChildPlan& plan) {
  prepareForkedChild(true, plan.parentPid);
  // Nothing of the worker's (sockets of other threads) reaches the program.
  ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
  if (!plan.namespaces) {
    // What the program leaves behind is orphaned to us, not to the host's init.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    initMain(plan);
  }

  const long init = ::syscall(SYS_clone,
                              CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID |
                                  CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
                              nullptr, nullptr, nullptr, nullptr);
  if (init < 0) failSetup(plan, kStageClone);
  if (init == 0) initMain(plan);
  const int pid = static_cast<int>(init);
  if ((plan.denySetgroups && !writeProcFile(pid, "setgroups", "deny")) ||
      !writeProcFile(pid, "uid_map", plan.uidMap) || !writeProcFile(pid, "gid_map", plan.gidMap)) {
    const int err = errno;
    ::kill(pid, SIGKILL);
    errno = err;
    failSetup(plan, kStageMaps);
  }
  if (::write(plan.syncWrite, "g", 1) != 1) {
    ::kill(pid, SIGKILL);
    failSetup(plan, kStageWaitMaps);
  }
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

}  // namespace kiln::sandbox
