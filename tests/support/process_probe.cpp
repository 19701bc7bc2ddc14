#include "tests/support/process_probe.h"

#include <signal.h>

#include <cerrno>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace kiln::testsupport {

bool processGone(int pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::optional<ProcessInfo> readProcess(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  std::size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessInfo info;
  info.pid = pid;
  info.name = line.substr(open + 1, close - open - 1);
  std::istringstream rest(line.substr(close + 1));
  if (!(rest >> info.state >> info.ppid)) return std::nullopt;
  return info;
}

std::vector<ProcessInfo> descendantsOf(int root) {
  std::multimap<int, ProcessInfo> byParent;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    if (auto info = readProcess(std::stoi(name))) byParent.emplace(info->ppid, *info);
  }
  std::vector<ProcessInfo> found;
  std::vector<int> frontier{root};
  while (!frontier.empty()) {
    int parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = byParent.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      found.push_back(it->second);
      frontier.push_back(it->second.pid);
    }
  }
  return found;
}

double cpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  std::size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  // After "(comm)": state, then fields 4 to 13, then utime, stime, cutime
  // and cstime (fields 14 to 17, in clock ticks).
  std::istringstream rest(line.substr(close + 1));
  std::string skipped;
  for (int field = 3; field <= 13; ++field) rest >> skipped;
  long long utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (!(rest >> utime >> stime >> cutime >> cstime)) return 0;
  return double(utime + stime + cutime + cstime) / double(::sysconf(_SC_CLK_TCK));
}

unsigned openDescriptors(int pid) {
  unsigned count = 0;
  std::error_code error;
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", error);
  for (; !error && it != std::filesystem::directory_iterator(); it.increment(error)) ++count;
  return count;
}

DirectoryCount countBelow(const std::filesystem::path& directory) {
  DirectoryCount count;
  std::error_code error;
  std::filesystem::recursive_directory_iterator it(directory, error);
  // Entries may vanish while we walk (sessions ending): count what is seen.
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it.depth() > 0) {
      ++count.nested;
    } else if (it->is_directory(error)) {
      ++count.subdirectories;
    }
  }
  return count;
}

OrphanReaper::OrphanReaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

OrphanReaper::~OrphanReaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }

unsigned OrphanReaper::reapOrphans(const std::string& spared) {
  unsigned reaped = 0;
  for (const ProcessInfo& child : descendantsOf(::getpid())) {
    if (child.ppid != ::getpid() || !child.zombie() || child.name == spared) continue;
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) == child.pid) ++reaped;
  }
  return reaped;
}

}  // namespace kiln::testsupport
