// What a soak watches in other processes, read from /proc and the file
// system: resident memory, open descriptors, the process tree (children,
// zombies) and the entries under a directory. Mechanism only (Linux).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kiln::testsupport {

struct ProcessInfo {
  int pid = 0;
  int ppid = 0;
  char state = '?';  // as in /proc/<pid>/stat: R, S, D, Z (zombie), ...
  std::string name;  // /proc/<pid>/comm: "kiln", "opt-19", "kiln-isolated"
  bool zombie() const { return state == 'Z'; }
};

// True when `pid` no longer exists at all (neither running nor a zombie).
bool processGone(int pid);

// Reads /proc/<pid>/stat; nullopt if the process is gone.
std::optional<ProcessInfo> readProcess(int pid);

// Every process below `root` in the tree (children, their children, ...).
std::vector<ProcessInfo> descendantsOf(int root);

// CPU seconds (user + system) `pid` has used, with those of the children it
// has reaped; 0 if it is gone.
double cpuSeconds(int pid);

// Open file descriptors of `pid` (entries of /proc/<pid>/fd); 0 if gone.
unsigned openDescriptors(int pid);

// What lies under a directory: its subdirectories, and every entry (file or
// directory) inside those, recursively. Zeros if it does not exist.
struct DirectoryCount {
  std::size_t subdirectories = 0;
  std::size_t nested = 0;
};
DirectoryCount countBelow(const std::filesystem::path& directory);

// Makes this process the reaper of its orphaned descendants while it lives
// (PR_SET_CHILD_SUBREAPER), so that a compiler outliving a killed worker
// shows up in descendantsOf() instead of escaping to init.
class OrphanReaper {
 public:
  OrphanReaper();
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;
  // Reaps zombie children of this process except those named `spared`
  // (children this process started itself, which their owners reap);
  // returns how many were reaped.
  unsigned reapOrphans(const std::string& spared);
};

}  // namespace kiln::testsupport
