// `kiln bench llvm`: the `llvm` session type through real coordinator and
// worker processes on loopback. On a small kiln-bench-v0 program and a csmith
// program of a few thousand instructions: step latency (a cheap pass and an
// expensive one; fresh, missed and replayed by the transition cache), fork,
// StartSession cached and uncached, and, in the same run, one `opt-19`
// subprocess per step on the same input and opt's own time in the pass;
// plus the worker's RSS with many live llvm sessions and after they end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct LlvmBenchOptions {
  unsigned iterations = 300;         // samples per step/fork measurement (also time-bounded)
  unsigned startIterations = 60;     // samples per StartSession measurement
  unsigned optRuns = 15;             // opt-19 subprocesses per pass and benchmark
  double secondsPerMeasurement = 8;  // upper bound per measurement
  std::string smallBenchmark = "benchmark://kiln-bench-v0/crc32";
  // A pass that leaves a benchmark unchanged on its first application is
  // reported as such, without an opt comparison (globaldce on crc32).
  std::vector<std::string> passes = {"mem2reg", "globaldce", "gvn"};
  unsigned csmithSeed = 1;  // first seed tried for the large benchmark
  std::int64_t largeMinInstructions = 2000;
  unsigned liveSessions = 1000;  // for the memory figure
  unsigned slots = 2;
  std::string opt = "opt-19";
  bool pinned = true;     // also measure with every process on CPU 0
  bool forceTcp = false;  // client::ClientOptions::forceTcp
};

Result<Report> runLlvmBench(const LlvmBenchOptions& options);

}  // namespace kiln::bench
