// `kiln bench mlgo`: what kiln adds to an MLGO inlining episode. Decisions per
// second of an mlgo-inline session driven through a local cluster (client ->
// worker -> opt-19) against a host loop on the same opt-19 over the pipes
// (mlgo::InteractiveCompiler), and modules per second of -Oz batch jobs run as
// mlgo-compile sessions with every slot busy. Decisions are timed as-is and
// with everything pinned to CPU 0, next to a raw ZeroMQ round trip (the floor).
#pragma once

#include <string>
#include <vector>

#include "bench/stats.h"
#include "common/status.h"

namespace kiln::bench {

struct MlgoBenchOptions {
  std::vector<std::string> programs = {"benchmark://kiln-bench-v0/huffman",
                                       "generator://csmith-v0/11"};
  unsigned repetitions = 20;     // episodes per program and path (min and median reported)
  unsigned jobs = 200;           // -Oz compile jobs
  unsigned slots = 2;            // worker slots = jobs kept in flight
  bool pinned = true;            // also measure the decisions with every thread and child on CPU 0
  unsigned floorSamples = 2000;  // raw ZeroMQ round trips for the floor
};

Result<Report> runMlgoBench(const MlgoBenchOptions& options);

}  // namespace kiln::bench
