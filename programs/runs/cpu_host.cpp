#include "programs/runs/cpu_host.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "programs/runs/cpu_ledger.h"

namespace kiln::runs {
namespace {

std::vector<int> cpusOf(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// The CPUs sharing `cpu`'s core, from /sys; just `cpu` when /sys says nothing.
std::vector<int> siblingsOf(int cpu) {
  std::ifstream in(fmt::format("/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list", cpu));
  std::stringstream text;
  text << in.rdbuf();
  if (auto siblings = parseCpuList(text.str())) return *siblings;
  return {cpu};
}

}  // namespace

std::filesystem::path defaultCpuLockDirectory() {
  return std::filesystem::temp_directory_path() /
         fmt::format("kiln-runtime-cpus-{}", static_cast<unsigned>(::getuid()));
}

SystemCpuHost::SystemCpuHost(std::filesystem::path lockDirectory)
    : lockDirectory_(std::move(lockDirectory)) {}

SystemCpuHost::~SystemCpuHost() {
  for (const auto& [cpu, fd] : heldLocks_) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
  }
}

Result<std::unique_ptr<SystemCpuHost>> SystemCpuHost::create(std::filesystem::path lockDirectory) {
  if (!lockDirectory.empty()) {
    const std::string path = lockDirectory.string();
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return invalidArgument(
          fmt::format("the host-wide CPU lock directory {} cannot be made ({}): name another with "
                      "--runtime-cpu-locks DIR, or 'off' when this worker has CPUs of its own",
                      path, std::strerror(errno)));
    }
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid()) {
      return permissionDenied(fmt::format(
          "the host-wide CPU lock directory {} is not a directory of this user (a symlink, a "
          "file, or another user's): name another with --runtime-cpu-locks DIR",
          path));
    }
  }
  return std::unique_ptr<SystemCpuHost>(new SystemCpuHost(std::move(lockDirectory)));
}

std::vector<std::vector<int>> SystemCpuHost::allowedCores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return {};
  const std::vector<int> cpus = cpusOf(allowed);
  std::set<int> placed;
  std::vector<std::vector<int>> cores;
  for (int cpu : cpus) {
    if (placed.contains(cpu)) continue;
    std::vector<int> core;
    for (int sibling : siblingsOf(cpu)) {
      if (CPU_ISSET(sibling, &allowed) && !placed.contains(sibling)) core.push_back(sibling);
    }
    if (std::find(core.begin(), core.end(), cpu) == core.end()) core.push_back(cpu);
    placed.insert(core.begin(), core.end());
    cores.push_back(std::move(core));
  }
  return cores;
}

Result<bool> SystemCpuHost::tryLockHostWide(int cpu) {
  if (lockDirectory_.empty() || cpu < 0) return true;
  if (heldLocks_.contains(cpu)) return false;
  const std::filesystem::path file = lockDirectory_ / fmt::format("cpu-{}.lock", cpu);
  // Opened per lease, not kept: a process forked meanwhile (a nest's child,
  // the sandbox) shares an open lock only while it is held, and the explicit
  // unlock below ends it for every copy.
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return invalidArgument(fmt::format("the host-wide lock of CPU {} ({}) cannot be opened: {}",
                                       cpu, file.string(), std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) return false;
    return internalError(
        fmt::format("flock of {} failed: {}", file.string(), std::strerror(error)));
  }
  heldLocks_[cpu] = fd;
  return true;
}

void SystemCpuHost::unlockHostWide(int cpu) {
  auto held = heldLocks_.find(cpu);
  if (held == heldLocks_.end()) return;
  ::flock(held->second, LOCK_UN);
  ::close(held->second);
  heldLocks_.erase(held);
}

void SystemCpuHost::keepCompileWorkOn(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  for (int cpu : cpus) CPU_SET(cpu, &wanted);
  if (!given_) {
    // The first call: threads with the process's allowed mask are compile
    // work; a thread pinned elsewhere before (a bench's, a test's) is not.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
    given_ = cpusOf(allowed);
  }
  if (*given_ == cpus) return;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task", error)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
    cpu_set_t mask;
    CPU_ZERO(&mask);
    // A thread that ended meanwhile fails both calls: nothing to move.
    if (tid <= 0 || ::sched_getaffinity(tid, sizeof(mask), &mask) != 0) continue;
    if (cpusOf(mask) != *given_) continue;
    ::sched_setaffinity(tid, sizeof(wanted), &wanted);
  }
  given_ = cpus;
}

}  // namespace kiln::runs
