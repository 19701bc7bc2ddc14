// `kiln bench soak`: a bounded soak of a real cluster (a coordinator, plain
// workers and a nesting host, each a `kiln` child process). About N sessions
// of a mix of replayable types (llvm on kiln-bench-v0 programs, noop,
// mlgo-inline) start, step, fork and end at random while a random plain
// worker is SIGKILLed every few seconds and restarted (the first worker and
// the nesting host are never killed, so that their memory can be judged over
// the whole run). Every S seconds it samples the RSS and open descriptors of
// every kiln process and of itself, the processes below each, and the
// entries in each worker's working directory. Every step request is
// accounted for (answered, a compile error, or lost), and every session that
// ends has its state checked (soak_checks.h). At the end every session is
// ended and it checks that nothing was left behind: no session on any
// worker, no compiler process (zombies included), no file in any working
// directory (a killed worker's directory included), descriptors back near
// where they started; and it judges RSS growth (soak_growth.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <kiln/status.h>
#include "bench/soak_checks.h"
#include "bench/stats.h"

namespace kiln::bench {

struct SoakOptions {
  double seconds = 600;
  unsigned sessions = 200;
  double sampleEvery = 10;
  double killEvery = 10;  // mean pause between kills (uniform in [0.5, 1.5] x); 0 = no kills
  unsigned workers = 3;   // plain workers; all but the first are killed
  unsigned slots = 2;     // per worker and for the nesting host
  std::string mix = "llvm:5,noop:3,mlgo-inline:2";  // type:weight, comma-separated
  std::uint64_t seed = 0;                           // 0 = random
  std::filesystem::path kiln;                       // the kiln binary; empty = this executable
  unsigned descriptorSlack = 16;                    // end fds may exceed start fds by this much
  // Where to keep every host's log (warnings and errors), one file per
  // process, replacements included; empty = hosts log nothing.
  std::filesystem::path logDirectory;
};

struct SoakFigures {
  // Step requests, each counted once: attempted = completed + compileErrors
  // + restoreCompileErrors + lost.
  std::uint64_t stepsAttempted = 0, stepsCompleted = 0, stepsLost = 0;
  std::uint64_t compileErrors = 0;  // steps answered with a compile error: answers, not losses
  // Steps whose restore's replay (of steps that had succeeded) got a
  // compile error: the replay did not reproduce the session (fail the run).
  std::uint64_t restoreCompileErrors = 0;
  std::uint64_t forksRefused = 0;  // forks answered with a compile error (fail the run)
  std::uint64_t started = 0, forked = 0, ended = 0, restored = 0, kills = 0;
  std::uint64_t requestsFailed = 0;  // starts, forks and ends that failed (fail the run)
  // Ended sessions' states checked, and wrong, per session type.
  std::map<std::string, StateCheckCounts> states;
  std::uint64_t mismatched = 0;         // wrong states of every type
  std::uint64_t stateChecksFailed = 0;  // checks that could not run (fail the run)
  // Left behind at the end (all must be 0).
  std::uint64_t liveSessions = 0, compilers = 0, zombies = 0, workingDirectoryEntries = 0;
  std::uint64_t descriptorGrowth = 0;  // over the slack, summed over long-lived processes
  std::uint64_t orphansReaped = 0;     // compilers that outlived a killed worker
  unsigned growingProcesses = 0;
  // Hosts (plain workers, the nesting host) that died without being killed,
  // by a crash nobody caught; they were started again.
  std::uint64_t workersDiedOnTheirOwn = 0;
  unsigned crashes = 0;  // other processes seen gone (the coordinator): not restarted
  // Hosts that caught a crash inside compile work, stopped and were started
  // again (exit_codes.h): contained, not a failure.
  std::uint64_t restartsAfterCaughtCrash = 0;
  bool leftBehind() const {
    return liveSessions + compilers + zombies + workingDirectoryEntries + descriptorGrowth != 0;
  }
  bool passed() const {
    return !leftBehind() && crashes == 0 && workersDiedOnTheirOwn == 0 && stepsLost == 0 &&
           restoreCompileErrors == 0 && forksRefused == 0 && mismatched == 0 &&
           stateChecksFailed == 0 && requestsFailed == 0;
  }
};

Result<Report> runSoakBench(const SoakOptions& options, SoakFigures* figures = nullptr);

}  // namespace kiln::bench
