// `kiln bench datasets`: an operator's corpus at scale. A corpus of N modules
// (10,000 by default) is made in a scratch directory from kiln-bench-v0's and
// csmith's modules (hard links, so it costs no disk), as a plain directory
// and in MLGO's layout, and served by a real worker process: the index's
// scan time (in this process and as the worker's added start-up), listing
// every module over the wire, start latency of a module never read against
// one in the worker's caches, and the worker's RSS while sessions touch
// thousands of different modules, against the bound its caches set.
#pragma once

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct DatasetsBenchOptions {
  unsigned modules = 10000;    // per layout
  unsigned touched = 2000;     // different modules llvm sessions start on
  unsigned csmithSeeds = 8;    // csmith programs among the sources (with kiln-bench-v0's 25)
  unsigned repetitions = 5;    // samples of the index scan, start-up and listings
  unsigned cachedStarts = 50;  // samples of a start on a cached module
};

Result<Report> runDatasetsBench(const DatasetsBenchOptions& options);

}  // namespace kiln::bench
