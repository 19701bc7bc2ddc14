// Runs a benchmark binary, which is hostile input, where it cannot harm the
// host or outlive its request (mechanism; limits are sandbox_limits.h's).
//
// Where the host allows it (root, or unprivileged user namespaces) every run
// gets fresh user, mount, network, PID, IPC and UTS namespaces:
//   worker -> keeper (own process group; dies with the worker)
//          -> init (PID 1 of the new namespaces; dies with the keeper)
//          -> the program, once per repeat (dies with init)
// The keeper maps the namespace's root to an unprivileged user (nobody, for
// a root worker; the worker's own user otherwise), so RLIMIT_NPROC holds.
// init makes every mount read-only, mounts a size-limited tmpfs as the
// program's working directory, and times each repeat; when a run ends or
// its time is up, init kills everything left in the namespace (kill(-1)),
// and leaving takes the namespace and its tmpfs with it. A seccomp filter
// kills a program that opens a socket (the new network namespace has no
// route out anyway), traces or mounts. Without namespaces the fallback
// (Isolation::kProcessGroup) keeps the rlimits, the process group kill,
// PR_SET_PDEATHSIG, the seccomp filter and a scratch directory removed
// afterwards, but not the read-only host or the network: the operator can
// refuse it (SandboxOptions::requireNamespaces). In both, where the kernel
// has Landlock, the program may open only system libraries, a few devices,
// its own /proc entry, its copy and its scratch directory (file_view.h);
// without Landlock it can read every file the mounts or its user allow, and
// describeIsolation() says so.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/sandbox_limits.h>
#include <kiln/status.h>
#include "common/process/subprocess.h"
#include "programs/sandbox/file_view.h"

namespace kiln::sandbox {

enum class Isolation { kNamespaces, kProcessGroup };

struct SandboxOptions {
  // Where each run's private directory is made (and removed afterwards).
  std::filesystem::path scratchRoot = std::filesystem::temp_directory_path();
  // Refuse to run anything when the host allows no namespaces.
  bool requireNamespaces = false;
  // The user a root worker's sandboxes run as, outside their namespace.
  std::uint32_t unprivilegedId = 65534;
  // false: never try namespaces (the fallback below), e.g. on a host whose
  // probe run is slow or where the operator isolates the worker otherwise.
  bool useNamespaces = true;
  // false: no Landlock even where the kernel has it (tests comparing the two).
  bool restrictFiles = true;
};

struct SandboxRun {
  std::filesystem::path program;  // an executable file; copied into the run's directory
  std::vector<std::string> args;  // after argv[0]
  std::string stdinBytes;         // the program's whole stdin (then end of file)
  // Extra environment entries, NAME=value (e.g. ASAN_OPTIONS); the program
  // otherwise sees only PATH and LC_ALL=C.
  std::vector<std::string> environment;
  // Runs of the same command, one after another in the same sandbox (a
  // runtime measurement); the first that fails stops them. Output is kept
  // from the first run only.
  unsigned repeats = 1;
  // Pins the program (and what it starts) to this CPU; -1: it runs where
  // the worker may. A runtime measurement pins, so that its runs do not
  // migrate between CPUs mid-run.
  int cpu = -1;
  // Whether limits.memoryBytes is RLIMIT_AS (false for sanitizer builds,
  // which reserve terabytes of address space: they bring their own limit).
  bool limitAddressSpace = true;
};

struct RunRecord {
  ExitStatus status;
  std::chrono::nanoseconds wallTime{0};
  std::uint64_t peakRssBytes = 0;  // of the program (its largest process)
  bool timedOut = false;           // killed at the wall-time limit
  // Processes of the run still alive when it ended or was killed (the
  // program's leftovers; a fork bomb sits at the process limit).
  std::uint32_t leftoverProcesses = 0;
};

struct SandboxOutcome {
  std::vector<RunRecord> runs;  // one per repeat that ran
  std::string stdoutText;       // the first run's first limits.outputBytes
  std::string stderrText;
  std::uint64_t stdoutBytes = 0;  // written by the first run, kept or not
  std::uint64_t stderrBytes = 0;
  Isolation isolation = Isolation::kNamespaces;
};

class Sandbox {
 public:
  // Probes, by running `true` in one, whether this host gives namespaces;
  // failed-precondition-like permission-denied when they are required and
  // it does not.
  static Result<Sandbox> create(SandboxOptions options);

  Isolation isolation() const { return isolation_; }
  // The Landlock ABI the runs' file restriction uses; 0: none (file_view.h).
  int fileRestriction() const { return landlockAbi_; }
  // "namespaces (user, mount, network, pid, ipc, uts) as uid 65534" or the fallback's words.
  std::string describeIsolation() const;

  // Runs `run` within `limits`. An error only when the sandbox itself could
  // not be set up (the program file missing: not-found); whatever the
  // program does is in the outcome.
  Result<SandboxOutcome> run(const SandboxRun& run, const SandboxLimits& limits) const;

 private:
  Sandbox(SandboxOptions options, Isolation isolation)
      : options_(std::move(options)),
        isolation_(isolation),
        landlockAbi_(options_.restrictFiles ? landlockAbi() : 0) {}
  SandboxOptions options_;
  Isolation isolation_;
  int landlockAbi_;
};

}  // namespace kiln::sandbox
