// kiln's main job (`kiln demo`): two experiments share one nesting host, a
// random search and a greedy search over LLVM pass orderings on a few
// kiln-bench-v0 and csmith programs, each alternating collection rounds
// (units of work pulled by a WorkPool) with training lulls as long as its
// collection, out of phase so that each lull is filled by the other
// experiment. Shows live progress, prints the best sequence per benchmark
// against -Oz, and writes an HTML report with the utilization timeline.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/curve_keys.h>
#include <kiln/status.h>
#include "tools/demo/search.h"

namespace kiln::demo {

struct DemoOptions {
  std::string coordinator;  // empty: an embedded cluster with one nesting host
  unsigned slots = 0;       // embedded host's slots; 0 = the machine's cores
  unsigned rounds = 3;
  std::vector<std::string> benchmarks;  // empty: a default mix
  SearchBudget budget;
  double lullFactor = 1.0;  // lull = this x the round's collection time
  std::string report = "kiln-demo-report.html";
  std::optional<ClusterKeys> keys;  // the cluster key (--key-file); also used by an embedded one
  // The embedded cluster's --allow-files roots (WorkerConfig::allowFiles);
  // nullopt = its default, the current directory (it listens on loopback).
  std::optional<std::vector<std::filesystem::path>> allowFiles;
};

std::vector<std::string> defaultBenchmarks();
// Benchmarks the learning demo evaluates its policies on and never trains
// on: other kiln-bench programs and another csmith seed.
std::vector<std::string> defaultHeldOut();

// Runs the job, printing progress and the final table to `out`.
Status runDemo(const DemoOptions& options, std::FILE* out);

}  // namespace kiln::demo
