// What programs/runs/measuring_cpus.h asks of the host, behind a seam that tests
// fake: the CPUs the process may use and their cores, a host-wide lock per
// CPU (so that worker processes on one host never time on one CPU at once),
// and moving the process's compile threads off the CPUs that time.
//
// SystemCpuHost is Linux's: sched_getaffinity for the allowed CPUs (the
// cpuset and taskset both show there), /sys's thread_siblings_list for the
// cores, flock(2) on <dir>/cpu-<n>.lock for the locks (the kernel drops them
// with the process, so a SIGKILLed worker holds none), and
// sched_setaffinity on every thread of /proc/self/task that still has the
// mask it was last given (a thread pinned elsewhere on purpose is left alone;
// a thread started meanwhile inherits its creator's mask and so is moved with
// the others).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <kiln/status.h>

namespace kiln::runs {

class CpuHost {
 public:
  virtual ~CpuHost() = default;
  // The CPUs this process may use, grouped by physical core.
  virtual std::vector<std::vector<int>> allowedCores() = 0;
  // Takes `cpu`'s host-wide lock without waiting: true when taken, false when
  // another holder (a process, or another context of this one) has it.
  virtual Result<bool> tryLockHostWide(int cpu) = 0;
  virtual void unlockHostWide(int cpu) = 0;
  // Moves the process's compile work (its threads, and what they start from
  // now on) to `cpus`.
  virtual void keepCompileWorkOn(const std::vector<int>& cpus) = 0;
};

class SystemCpuHost final : public CpuHost {
 public:
  // `lockDirectory` empty: no host-wide locks (the operator gave this
  // worker CPUs of its own). Made (0700) if missing; refused unless it is a
  // directory of this user, not a symlink: another user's directory could
  // hold every lock and stall each measurement.
  static Result<std::unique_ptr<SystemCpuHost>> create(std::filesystem::path lockDirectory);
  ~SystemCpuHost() override;

  std::vector<std::vector<int>> allowedCores() override;
  Result<bool> tryLockHostWide(int cpu) override;
  void unlockHostWide(int cpu) override;
  void keepCompileWorkOn(const std::vector<int>& cpus) override;

  const std::filesystem::path& lockDirectory() const { return lockDirectory_; }

 private:
  explicit SystemCpuHost(std::filesystem::path lockDirectory);
  std::filesystem::path lockDirectory_;
  std::map<int, int> heldLocks_;           // cpu -> the descriptor holding its lock
  std::optional<std::vector<int>> given_;  // the mask compile threads last got
};

// The host-wide lock directory when the operator names none: one per user in
// the system's temporary directory, so that every worker process of a user on
// a host (kiln local's workers, a nest's isolated children, `kiln worker`s
// started side by side) takes turns on the same CPUs.
std::filesystem::path defaultCpuLockDirectory();

}  // namespace kiln::runs
