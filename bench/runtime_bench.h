// `kiln bench runtime`: do sessions measuring a program at once get what each
// gets alone? Real coordinator and worker processes on loopback; for each
// kiln-bench-v0 program, llvm sessions observe RuntimeStats alone (the floor,
// measured the same way in the same run) and N at a time, rounds interleaved
// so that the host's drift falls on every level alike. Per program and level:
// the pooled samples' median and spread, each session's median, the ratio to
// alone and its judge (within the two medians' 95% confidence intervals),
// the CPUs the measurements ran on and their wait in line.
//
// --workers spreads the sessions over several worker processes (the host-wide
// CPU locks make them take turns); worker flags such as
// --runtime-cpu-locks=off reproduce what happens without them.
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct RuntimeBenchOptions {
  std::vector<std::string> programs = {"matmul", "crc32", "heapsort"};  // kiln-bench-v0 names
  std::vector<unsigned> sessions = {2, 4};  // levels measured besides alone
  unsigned runs = 10;                       // llvm.runtime_runs of each measurement
  unsigned rounds = 3;                      // measurements of each session per level
  unsigned workers = 1;                     // worker processes, sessions round-robin
  std::vector<std::string> workerFlags;     // appended to every `kiln worker`
};

Result<Report> runRuntimeBench(const RuntimeBenchOptions& options);

}  // namespace kiln::bench
