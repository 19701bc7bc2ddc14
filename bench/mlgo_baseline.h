// `kiln bench mlgo --baseline`: what MLGO rewards are judged against, per
// module set (kiln-bench-v0, csmith seeds, each corpus given) and kind. On
// every module an agent answering DefaultAdvice plays a whole episode through
// a worker of an in-process cluster, and its .text size is set beside
//   before:   what rewards were judged against until issue 42 (LLVM's default
//             build, without the module's own flags),
//   after:    the session's DefaultNativeSize and reward (the reference build),
//   residual: LLVM's default build with the module's flags, which the ML
//             advisors cannot reproduce (bytes and size, built in this process).
// mlgo-compile rows check its job steps against the same builds.
#pragma once

#include <cstddef>
#include <vector>

#include <kiln/kit/operator_settings.h>
#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct MlgoBaselineOptions {
  bool kilnBench = true;                 // every kiln-bench-v0 program
  unsigned csmithSeeds = 20;             // generator://csmith-v0/1..N
  std::vector<OperatorDataset> corpora;  // --dataset NAME=DIR
  std::size_t maxCorpusModules = 0;      // per corpus, the first N in URI order; 0 = all
};

Result<Report> runMlgoBaselineBench(const MlgoBaselineOptions& options);

// ok when every agent that answered DefaultAdvice was rewarded 0 and measured
// its baseline's size; otherwise an error naming the rows that broke it.
Status baselineVerdict(const Report& report);

}  // namespace kiln::bench
