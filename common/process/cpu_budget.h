// Fixed CPU budgets for groups of processes, as separate machines have
// them: the nesting bench and the demo model a cluster's hosts on one
// machine with these, so that one "machine's" idle CPU is not lent to
// another by the kernel's scheduler as it would be between processes that
// merely share cores.
//
// Three mechanisms, best first, whichever the machine allows:
//   cgroup v2: a group with a cpu.max quota (fractions of a CPU);
//   cgroup v1: a group of the cpu controller with a CFS quota (alike);
//   affinity:  whole CPUs pinned with sched_setaffinity (a cpuset without
//              cgroups: budgets round up to whole CPUs).
// Parsing the kernel's files and sizing quotas are pure functions; the
// groups are the mechanism.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln {

enum class CpuBudgetMechanism { kCgroupV2, kCgroupV1, kAffinity };

const char* cpuBudgetMechanismName(CpuBudgetMechanism mechanism);
// "cgroup-v2", "cgroup-v1" or "affinity"; invalid-argument otherwise.
Result<CpuBudgetMechanism> parseCpuBudgetMechanism(std::string_view name);

// Where the cgroup file systems are mounted, from /proc/self/mountinfo's text.
struct CgroupMounts {
  std::filesystem::path v2;     // the cgroup2 mount, empty if none
  std::filesystem::path v1Cpu;  // the v1 hierarchy with the cpu controller, empty if none
};
CgroupMounts parseCgroupMounts(std::string_view mountinfo);

// This process's group in one hierarchy, from /proc/self/cgroup's text:
// the v2 line ("0::/path") with an empty controller, else the v1 line that
// lists it ("4:cpu,cpuacct:/path"). Empty if there is none.
std::string ownCgroup(std::string_view procSelfCgroup, std::string_view controller);

// A CFS quota for `cpus` CPUs over a short period: 10 ms, so that a
// throttled group waits at most a few milliseconds, not the default 100.
struct CfsQuota {
  long periodMicros = 0;
  long quotaMicros = 0;
};
CfsQuota cfsQuotaFor(double cpus);

// Whole CPUs for the affinity mechanism: each budget, rounded up to whole
// CPUs, gets CPUs of `available` no other budget has while there are some,
// then shares them round-robin (the note says so). Pure.
struct CpuAssignment {
  std::vector<std::vector<int>> cpus;  // per budget
  std::string note;                    // empty when every budget got its own CPUs
};
CpuAssignment assignWholeCpus(const std::vector<int>& available,
                              const std::vector<double>& budgets);

// What this machine lets a process do, probed once by making and removing a
// group with a quota.
struct CpuBudgetSupport {
  CpuBudgetMechanism mechanism = CpuBudgetMechanism::kAffinity;
  std::filesystem::path parent;  // cgroups: where groups are made
  std::vector<int> cpus;         // affinity: the CPUs this process may use
  std::string note;              // which mechanism, and why the better ones were not
};
// The best mechanism that works here, or `forced` (failed-precondition
// style errors name what it lacks).
Result<CpuBudgetSupport> probeCpuBudgets(std::optional<CpuBudgetMechanism> forced = {});
// What a --budget flag asks for: "none" (no budgets), "auto" (the best this
// machine allows) or a mechanism's name (that one, or the error saying what
// the machine lacks).
Result<std::optional<CpuBudgetSupport>> cpuBudgetsFor(std::string_view flag);

// One "machine": a group whose processes share `cpus` CPUs' worth of time.
// A process admitted brings its threads; children it forks later join by
// inheritance. Destruction moves any process still inside back to the
// parent group and removes the group.
class CpuBudgetGroup {
 public:
  // `name` makes the group's directory (with this process's pid); `wholeCpus`
  // are the CPUs of the affinity mechanism (assignWholeCpus), unused for
  // cgroups.
  static Result<std::unique_ptr<CpuBudgetGroup>> create(const CpuBudgetSupport& support,
                                                        const std::string& name, double cpus,
                                                        std::vector<int> wholeCpus = {});
  ~CpuBudgetGroup();
  CpuBudgetGroup(const CpuBudgetGroup&) = delete;
  CpuBudgetGroup& operator=(const CpuBudgetGroup&) = delete;

  Status admit(pid_t pid);
  double cpus() const { return cpus_; }
  // CPU seconds of the processes in the group now (those of members that
  // have exited are not counted; with affinity, of the admitted ones).
  double cpuSeconds() const;
  // "cgroup-v1 quota 0.50 CPU" / "affinity CPUs 0,1".
  std::string describe() const;

 private:
  CpuBudgetGroup(CpuBudgetMechanism mechanism, double cpus) : mechanism_(mechanism), cpus_(cpus) {}
  CpuBudgetMechanism mechanism_;
  double cpus_;
  std::filesystem::path directory_;  // cgroups
  std::vector<int> wholeCpus_;       // affinity
  std::vector<pid_t> admitted_;      // affinity: its members
};

}  // namespace kiln
