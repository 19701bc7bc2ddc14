#include "common/process/cpu_budget.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace kiln {
namespace {

constexpr const char* kMountinfo =
    "25 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
    "30 25 0:26 / /sys/fs/cgroup ro,nosuid master:9 - tmpfs tmpfs ro,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
    "34 30 0:30 / /sys/fs/cgroup/cpu,cpuacct rw shared:14 - cgroup cgroup rw,cpu,cpuacct\n"
    "35 30 0:31 / /sys/fs/cgroup/cpuset rw shared:15 - cgroup cgroup rw,cpuset\n";

TEST(CpuBudgetTest, FindsTheCgroupMountsInMountinfo) {
  CgroupMounts mounts = parseCgroupMounts(kMountinfo);
  EXPECT_EQ(mounts.v2, "/sys/fs/cgroup/unified");
  // The cpu controller, not cpuset (whose name starts alike).
  EXPECT_EQ(mounts.v1Cpu, "/sys/fs/cgroup/cpu,cpuacct");
  mounts = parseCgroupMounts("31 30 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\nbroken line\n");
  EXPECT_EQ(mounts.v2, "/sys/fs/cgroup");
  EXPECT_TRUE(mounts.v1Cpu.empty());
  EXPECT_TRUE(parseCgroupMounts("").v2.empty());
}

TEST(CpuBudgetTest, FindsThisProcesssGroupPerHierarchy) {
  const char* cgroup = "5:cpuset:/\n4:cpu,cpuacct:/job/a:b\n0::/user.slice/session-1.scope\n";
  EXPECT_EQ(ownCgroup(cgroup, "cpu"), "/job/a:b");
  EXPECT_EQ(ownCgroup(cgroup, ""), "/user.slice/session-1.scope");
  EXPECT_EQ(ownCgroup(cgroup, "memory"), "");
  EXPECT_EQ(ownCgroup("garbage\n", "cpu"), "");
}

TEST(CpuBudgetTest, QuotasUseAShortPeriodAndTheKernelsMinimum) {
  EXPECT_EQ(cfsQuotaFor(0.5).periodMicros, 10'000);
  EXPECT_EQ(cfsQuotaFor(0.5).quotaMicros, 5'000);
  EXPECT_EQ(cfsQuotaFor(2).quotaMicros, 20'000);
  EXPECT_EQ(cfsQuotaFor(0.01).quotaMicros, 1'000);
  EXPECT_EQ(cfsQuotaFor(-1).quotaMicros, 1'000);
}

TEST(CpuBudgetTest, WholeCpusGoToOneBudgetEachWhileThereAreEnough) {
  CpuAssignment a = assignWholeCpus({0, 1, 2, 3}, {1, 1, 2});
  ASSERT_EQ(a.cpus.size(), 3u);
  EXPECT_EQ(a.cpus[0], std::vector<int>{0});
  EXPECT_EQ(a.cpus[1], std::vector<int>{1});
  EXPECT_EQ(a.cpus[2], (std::vector<int>{2, 3}));
  EXPECT_TRUE(a.note.empty());
  // Half a CPU rounds up to one; four of them on two CPUs share.
  a = assignWholeCpus({0, 1}, {0.5, 0.5, 0.5, 0.5});
  EXPECT_EQ(a.cpus[2], std::vector<int>{0});
  EXPECT_EQ(a.cpus[3], std::vector<int>{1});
  EXPECT_NE(a.note.find("want 4 whole CPUs and 2 are available"), std::string::npos);
}

TEST(CpuBudgetTest, MechanismNamesRoundTrip) {
  for (auto m : {CpuBudgetMechanism::kCgroupV2, CpuBudgetMechanism::kCgroupV1,
                 CpuBudgetMechanism::kAffinity}) {
    auto parsed = parseCpuBudgetMechanism(cpuBudgetMechanismName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  auto bad = parseCpuBudgetMechanism("cpuset");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cgroup-v2, cgroup-v1 or affinity"), std::string::npos);
}

double processCpuSeconds(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // utime and stime: fields 14 and 15, counted after the command's ')'.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i >= 14) ticks += std::stod(field);
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A child that spins until killed, admitted to a group of `cpus`: the CPU it
// gets in `seconds` of wall time.
double spinnerCpuIn(CpuBudgetGroup& group, double seconds) {
  const pid_t child = ::fork();
  if (child == 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < end) {
    }
    ::_exit(0);
  }
  EXPECT_TRUE(group.admit(child).ok());
  const double before = processCpuSeconds(child);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double used = processCpuSeconds(child) - before;
  // The group counts its member's CPU as /proc does.
  EXPECT_GE(group.cpuSeconds(), used * 0.9);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return used;
}

// The mechanism itself, where the machine allows a quota: a spinning child
// in a budget of a fifth of a CPU gets about that, far from the whole CPU
// it takes unbudgeted.
TEST(CpuBudgetTest, AQuotaGroupHoldsASpinnerToItsBudget) {
  auto support = probeCpuBudgets();
  ASSERT_TRUE(support.ok()) << support.status().message();
  if (support->mechanism == CpuBudgetMechanism::kAffinity) {
    GTEST_SKIP() << "no cgroup quota on this machine: " << support->note;
  }
  auto group = CpuBudgetGroup::create(*support, "test", 0.2);
  ASSERT_TRUE(group.ok()) << group.status().message();
  EXPECT_NE((*group)->describe().find("quota 0.20 CPU"), std::string::npos);
  const double used = spinnerCpuIn(**group, 1.0);
  EXPECT_LT(used, 0.45) << "a 0.2 CPU budget let the spinner use " << used << " s in 1 s";
  std::printf("%s: the spinner used %.3f s of CPU in 1 s\n", support->note.c_str(), used);
  EXPECT_GT(used, 0.05);
}

TEST(CpuBudgetTest, TheAffinityMechanismPinsWholeCpus) {
  auto support = probeCpuBudgets(CpuBudgetMechanism::kAffinity);
  ASSERT_TRUE(support.ok());
  EXPECT_EQ(support->mechanism, CpuBudgetMechanism::kAffinity);
  EXPECT_FALSE(support->cpus.empty());
  auto pinned = CpuBudgetGroup::create(*support, "pin", 1, {support->cpus.front()});
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ((*pinned)->describe(), "affinity CPUs " + std::to_string(support->cpus.front()));
  EXPECT_FALSE(CpuBudgetGroup::create(*support, "none", 1).ok());  // no CPUs given
  EXPECT_FALSE(CpuBudgetGroup::create(*support, "zero", 0, {0}).ok());
  EXPECT_FALSE((*pinned)->admit(999'999'999).ok());
}

}  // namespace
}  // namespace kiln
