#include "common/process/cpu_budget.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "common/base/cpu_time.h"

namespace kiln {

namespace fs = std::filesystem;

namespace {

constexpr long kPeriodMicros = 10'000;
// The kernel refuses quotas under 1 ms.
constexpr long kMinQuotaMicros = 1'000;

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

bool hasWord(std::string_view list, std::string_view word, char separator) {
  for (std::string_view part : split(list, separator))
    if (part == word) return true;
  return false;
}

Result<std::string> readText(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return notFound(fmt::format("cannot read {}", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (!out) {
    const int error = errno;
    return permissionDenied(
        fmt::format("cannot write '{}' to {}: {}", text, path.string(), std::strerror(error)));
  }
  return okStatus();
}

// The mount's path for a group the kernel names `group` (relative to the
// hierarchy's root, which the mount may show only a part of).
fs::path groupDirectory(const fs::path& mount, const std::string& mountRoot,
                        const std::string& group) {
  std::string relative = group;
  if (mountRoot != "/" && relative.starts_with(mountRoot)) relative.erase(0, mountRoot.size());
  while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
  return relative.empty() ? mount : mount / relative;
}

struct MountLine {
  fs::path mountPoint;
  std::string root;
  std::string type;
  std::string superOptions;
};

std::vector<MountLine> parseMountLines(std::string_view mountinfo) {
  std::vector<MountLine> lines;
  for (std::string_view line : split(mountinfo, '\n')) {
    std::vector<std::string_view> fields;
    for (std::string_view field : split(line, ' '))
      if (!field.empty()) fields.push_back(field);
    // id parent major:minor root mount-point options [optional...] - type source super
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 7 || dash == fields.end() || fields.end() - dash < 4) continue;
    lines.push_back({std::string(fields[4]), std::string(fields[3]), std::string(dash[1]),
                     std::string(dash[3])});
  }
  return lines;
}

struct Hierarchy {
  fs::path mount;
  std::string root;
};

Hierarchy findHierarchy(std::string_view mountinfo, bool v2) {
  for (const MountLine& m : parseMountLines(mountinfo)) {
    if (v2 && m.type == "cgroup2") return {m.mountPoint, m.root};
    if (!v2 && m.type == "cgroup" && hasWord(m.superOptions, "cpu", ',')) {
      return {m.mountPoint, m.root};
    }
  }
  return {};
}

Status writeQuota(CpuBudgetMechanism mechanism, const fs::path& group, double cpus) {
  const CfsQuota q = cfsQuotaFor(cpus);
  if (mechanism == CpuBudgetMechanism::kCgroupV2) {
    return writeText(group / "cpu.max", fmt::format("{} {}", q.quotaMicros, q.periodMicros));
  }
  KILN_RETURN_IF_ERROR(writeText(group / "cpu.cfs_period_us", std::to_string(q.periodMicros)));
  return writeText(group / "cpu.cfs_quota_us", std::to_string(q.quotaMicros));
}

Result<fs::path> makeQuotaGroup(CpuBudgetMechanism mechanism, const fs::path& parent,
                                const std::string& name, double cpus) {
  const fs::path group = parent / fmt::format("kiln-{}-{}", ::getpid(), name);
  std::error_code error;
  fs::create_directory(group, error);
  if (error) {
    return permissionDenied(
        fmt::format("cannot make the group {}: {}", group.string(), error.message()));
  }
  Status quota = writeQuota(mechanism, group, cpus);
  if (!quota.ok()) {
    fs::remove(group, error);
    return quota;
  }
  return group;
}

// Moves every process left in `group` to `home`, then removes the group
// (retried briefly: a group whose last process just died stays busy until
// it is reaped).
void removeGroup(const fs::path& group, const fs::path& home) {
  if (auto procs = readText(group / "cgroup.procs"); procs.ok()) {
    for (std::string_view pid : split(*procs, '\n'))
      if (!pid.empty()) (void)writeText(home / "cgroup.procs", std::string(pid));
  }
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(group.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<fs::path> ownGroupDirectory(const Hierarchy& h, bool v2) {
  KILN_ASSIGN_OR_RETURN(std::string cgroup, readText("/proc/self/cgroup"));
  return groupDirectory(h.mount, h.root, ownCgroup(cgroup, v2 ? "" : "cpu"));
}

// A quota group made and removed under the best parent of hierarchy v2 or
// v1: the parent where groups are made, or why there is none.
Result<fs::path> probeQuota(std::string_view mountinfo, bool v2) {
  const CpuBudgetMechanism mechanism =
      v2 ? CpuBudgetMechanism::kCgroupV2 : CpuBudgetMechanism::kCgroupV1;
  const Hierarchy h = findHierarchy(mountinfo, v2);
  if (h.mount.empty()) {
    return notFound(v2 ? "no cgroup2 file system is mounted"
                       : "no cgroup v1 hierarchy has the cpu controller");
  }
  fs::path parent;
  if (v2) {
    // Groups are made at the top of the mount: a group that holds processes
    // (such as this one's) cannot hand controllers to groups below it.
    parent = h.mount;
    KILN_ASSIGN_OR_RETURN(std::string controllers, readText(parent / "cgroup.controllers"));
    while (!controllers.empty() && controllers.back() == '\n') controllers.pop_back();
    if (!hasWord(controllers, "cpu", ' ')) {
      return notFound(fmt::format("cgroup v2 at {} has no cpu controller (controllers: {})",
                                  parent.string(), controllers.empty() ? "none" : controllers));
    }
    KILN_ASSIGN_OR_RETURN(std::string enabled, readText(parent / "cgroup.subtree_control"));
    if (!hasWord(enabled.substr(0, enabled.find('\n')), "cpu", ' ')) {
      KILN_RETURN_IF_ERROR(writeText(parent / "cgroup.subtree_control", "+cpu"));
    }
  } else {
    KILN_ASSIGN_OR_RETURN(parent, ownGroupDirectory(h, false));
  }
  KILN_ASSIGN_OR_RETURN(fs::path group, makeQuotaGroup(mechanism, parent, "probe", 0.5));
  KILN_ASSIGN_OR_RETURN(fs::path home, ownGroupDirectory(h, v2));
  removeGroup(group, home);
  return parent;
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

const char* cpuBudgetMechanismName(CpuBudgetMechanism mechanism) {
  switch (mechanism) {
    case CpuBudgetMechanism::kCgroupV2:
      return "cgroup-v2";
    case CpuBudgetMechanism::kCgroupV1:
      return "cgroup-v1";
    case CpuBudgetMechanism::kAffinity:
      return "affinity";
  }
  return "?";
}

Result<CpuBudgetMechanism> parseCpuBudgetMechanism(std::string_view name) {
  for (auto m : {CpuBudgetMechanism::kCgroupV2, CpuBudgetMechanism::kCgroupV1,
                 CpuBudgetMechanism::kAffinity}) {
    if (name == cpuBudgetMechanismName(m)) return m;
  }
  return invalidArgument(
      fmt::format("unknown CPU budget mechanism '{}': cgroup-v2, cgroup-v1 or affinity", name));
}

CgroupMounts parseCgroupMounts(std::string_view mountinfo) {
  return {findHierarchy(mountinfo, true).mount, findHierarchy(mountinfo, false).mount};
}

std::string ownCgroup(std::string_view procSelfCgroup, std::string_view controller) {
  for (std::string_view line : split(procSelfCgroup, '\n')) {
    auto fields = split(line, ':');
    if (fields.size() < 3) continue;
    // The path may hold ':' itself: it is everything after the second one.
    const std::string_view path = line.substr(fields[0].size() + fields[1].size() + 2);
    if (controller.empty() ? fields[0] == "0" && fields[1].empty()
                           : hasWord(fields[1], controller, ',')) {
      return std::string(path);
    }
  }
  return {};
}

CfsQuota cfsQuotaFor(double cpus) {
  const long quota = std::lround(std::max(cpus, 0.0) * kPeriodMicros);
  return {kPeriodMicros, std::max(quota, kMinQuotaMicros)};
}

CpuAssignment assignWholeCpus(const std::vector<int>& available,
                              const std::vector<double>& budgets) {
  CpuAssignment a;
  std::size_t next = 0, wanted = 0;
  for (double budget : budgets) {
    const auto whole = static_cast<std::size_t>(std::max(1.0, std::ceil(budget - 1e-9)));
    wanted += whole;
    std::vector<int> cpus;
    for (std::size_t i = 0; i < whole && !available.empty(); ++i) {
      cpus.push_back(available[next % available.size()]);
      ++next;
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    a.cpus.push_back(std::move(cpus));
  }
  if (wanted > available.size()) {
    a.note =
        fmt::format("the budgets want {} whole CPUs and {} are available: some groups share CPUs",
                    wanted, available.size());
  }
  return a;
}

Result<CpuBudgetSupport> probeCpuBudgets(std::optional<CpuBudgetMechanism> forced) {
  auto mountinfo = readText("/proc/self/mountinfo");
  std::vector<std::string> notWorking;
  for (bool v2 : {true, false}) {
    const CpuBudgetMechanism m = v2 ? CpuBudgetMechanism::kCgroupV2 : CpuBudgetMechanism::kCgroupV1;
    if (forced && *forced != m) continue;
    Result<fs::path> parent = mountinfo.ok() ? probeQuota(*mountinfo, v2) : mountinfo.status();
    if (parent.ok()) {
      CpuBudgetSupport support{m, *parent, {}, ""};
      support.note =
          fmt::format("{} quotas under {}{}{}", cpuBudgetMechanismName(m), parent->string(),
                      notWorking.empty() ? "" : " (",
                      notWorking.empty() ? "" : fmt::format("{})", fmt::join(notWorking, "; ")));
      return support;
    }
    notWorking.push_back(
        fmt::format("{}: {}", cpuBudgetMechanismName(m), parent.status().message()));
    if (forced) return Status(parent.status().code(), notWorking.back());
  }
  CpuBudgetSupport support{CpuBudgetMechanism::kAffinity, {}, allowedCpus(), ""};
  if (support.cpus.empty()) return internalError("sched_getaffinity gave no CPU");
  support.note = fmt::format(
      "affinity: whole CPUs of {}{}", fmt::join(support.cpus, ","),
      notWorking.empty() ? "" : fmt::format(" (no quotas: {})", fmt::join(notWorking, "; ")));
  return support;
}

Result<std::optional<CpuBudgetSupport>> cpuBudgetsFor(std::string_view flag) {
  if (flag == "none") return std::optional<CpuBudgetSupport>{};
  std::optional<CpuBudgetMechanism> forced;
  if (flag != "auto") {
    KILN_ASSIGN_OR_RETURN(forced, parseCpuBudgetMechanism(flag));
  }
  KILN_ASSIGN_OR_RETURN(CpuBudgetSupport support, probeCpuBudgets(forced));
  return std::optional<CpuBudgetSupport>(std::move(support));
}

Result<std::unique_ptr<CpuBudgetGroup>> CpuBudgetGroup::create(const CpuBudgetSupport& support,
                                                               const std::string& name, double cpus,
                                                               std::vector<int> wholeCpus) {
  if (!(cpus > 0)) return invalidArgument(fmt::format("a CPU budget of {} CPUs", cpus));
  std::unique_ptr<CpuBudgetGroup> group(new CpuBudgetGroup(support.mechanism, cpus));
  if (support.mechanism == CpuBudgetMechanism::kAffinity) {
    if (wholeCpus.empty()) return invalidArgument("an affinity budget needs its CPUs");
    group->wholeCpus_ = std::move(wholeCpus);
    return group;
  }
  KILN_ASSIGN_OR_RETURN(group->directory_,
                        makeQuotaGroup(support.mechanism, support.parent, name, cpus));
  return group;
}

CpuBudgetGroup::~CpuBudgetGroup() {
  if (directory_.empty()) return;
  // Leftovers go to this process's own group, where they came from.
  auto mountinfo = readText("/proc/self/mountinfo");
  const bool v2 = mechanism_ == CpuBudgetMechanism::kCgroupV2;
  auto home = mountinfo.ok() ? ownGroupDirectory(findHierarchy(*mountinfo, v2), v2)
                             : Result<fs::path>(mountinfo.status());
  removeGroup(directory_, home.ok() ? *home : directory_.parent_path());
}

Status CpuBudgetGroup::admit(pid_t pid) {
  if (mechanism_ != CpuBudgetMechanism::kAffinity) {
    return writeText(directory_ / "cgroup.procs", std::to_string(pid));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : wholeCpus_) CPU_SET(cpu, &set);
  // Every thread it has now; threads and children made later inherit.
  std::error_code error;
  for (const auto& task : fs::directory_iterator(fmt::format("/proc/{}/task", pid), error)) {
    const pid_t tid = std::stoi(task.path().filename().string());
    if (::sched_setaffinity(tid, sizeof(set), &set) != 0 && errno != ESRCH) {
      return permissionDenied(
          fmt::format("cannot pin thread {} of {}: {}", tid, pid, std::strerror(errno)));
    }
  }
  if (error) return notFound(fmt::format("no process {}: {}", pid, error.message()));
  admitted_.push_back(pid);
  return okStatus();
}

double CpuBudgetGroup::cpuSeconds() const {
  std::vector<pid_t> members = admitted_;
  if (mechanism_ != CpuBudgetMechanism::kAffinity) {
    if (auto procs = readText(directory_ / "cgroup.procs"); procs.ok()) {
      for (std::string_view pid : split(*procs, '\n'))
        if (!pid.empty()) members.push_back(std::stoi(std::string(pid)));
    }
  }
  double seconds = 0;
  for (pid_t pid : members) seconds += std::max(0.0, processCpuSeconds(pid));
  return seconds;
}

std::string CpuBudgetGroup::describe() const {
  if (mechanism_ == CpuBudgetMechanism::kAffinity) {
    return fmt::format("affinity CPUs {}", fmt::join(wholeCpus_, ","));
  }
  return fmt::format("{} quota {:.2f} CPU", cpuBudgetMechanismName(mechanism_), cpus_);
}

}  // namespace kiln
