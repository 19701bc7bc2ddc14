// `kiln bench mlgo`: what kiln adds to an MLGO inlining episode. Decisions per
// second of an mlgo-inline session driven from this process through real
// coordinator and worker processes (client -> worker process -> opt-19)
// against a host loop on the same opt-19 over the pipes
// (mlgo_channel::InteractiveCompiler), and modules per second of -Oz batch jobs run as
// mlgo-compile sessions with every slot busy. Decisions are timed as-is and
// with every process pinned to CPU 0, each judged against the floor of the
// transport it took, measured between processes in the same run
// (bench/path_floors.h).
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct MlgoBenchOptions {
  std::vector<std::string> programs = {"benchmark://kiln-bench-v0/huffman",
                                       "generator://csmith-v0/11"};
  unsigned repetitions = 20;     // episodes per program and path (min and median reported)
  unsigned jobs = 200;           // -Oz compile jobs
  unsigned slots = 2;            // worker slots = jobs kept in flight
  bool pinned = true;            // also measure the decisions with every thread and child on CPU 0
  unsigned floorSamples = 2000;  // round trips per transport floor
};

Result<Report> runMlgoBench(const MlgoBenchOptions& options);

}  // namespace kiln::bench
