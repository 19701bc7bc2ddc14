// The forked side of a sandbox run (sandbox.h tells the process chain):
// the keeper, init and the program. Everything they use is prepared before
// fork in a ChildPlan, so that after fork they only make system calls.
// They tell the parent what happened through fixed-size ReportRecords on a
// pipe (each one write, smaller than PIPE_BUF: never torn).
#pragma once

#include <cstdint>

#include "programs/sandbox/file_view.h"

namespace kiln::sandbox {

struct ReportRecord {
  enum Kind : std::int32_t {
    kRun = 0,          // one repeat ended
    kSetupFailed = 1,  // a step before the program ran failed (stage, err)
    kExecFailed = 2,   // execve of the program failed (err)
  };
  std::int32_t kind = kRun;
  std::int32_t waitStatus = 0;  // as waitpid gives it
  std::int64_t wallNanos = 0;
  std::int64_t peakRssKib = 0;
  std::int32_t timedOut = 0;
  std::int32_t leftoverProcesses = 0;
  std::int32_t stage = 0;  // kSetupFailed: which step (setupStageName)
  std::int32_t err = 0;    // errno of the failed step
};

// The names of the setup steps, for messages.
const char* setupStageName(std::int32_t stage);

struct ChildPlan {
  bool namespaces = true;
  const char* program = nullptr;  // the copy in the run's directory
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* stdinPath = nullptr;
  const char* workDirectory = nullptr;
  const char* tmpfsOptions = nullptr;  // "size=...,mode=0777"
  // The keeper writes these into /proc/<init>/{setgroups,uid_map,gid_map}.
  const char* uidMap = nullptr;
  const char* gidMap = nullptr;
  bool denySetgroups = false;  // an unprivileged keeper must, to map its gid
  int stdoutFd = -1;           // the capture pipes' write ends
  int stderrFd = -1;
  int reportFd = -1;
  int syncRead = -1;  // keeper -> init: the maps are written
  int syncWrite = -1;
  unsigned repeats = 1;
  std::int64_t wallMillis = 0;
  std::uint64_t memoryBytes = 0;
  bool limitAddressSpace = true;
  int cpu = -1;
  std::uint64_t processes = 0;
  std::uint64_t fileBytes = 0;
  int parentPid = 0;
  // What the program may open; files.abi == 0: no Landlock, the host's
  // files as the mounts (or, without namespaces, its user) allow.
  FileView files;
};

// The keeper's body, run right after fork; never returns.
[[noreturn]] void keeperMain(const ChildPlan& plan);

}  // namespace kiln::sandbox
