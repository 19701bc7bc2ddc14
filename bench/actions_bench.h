// `kiln bench actions`: is every action safe on every valid module? A random
// search campaign (compilers/llvm_engine/action_campaign.h) over kiln-bench-v0 and csmith
// programs, in this process: episodes, steps, invalid modules, crashes,
// refusals, and what each pass costs. Judged against nothing but zero: any
// invalid module or crash is a bug of the action space, listed with the
// sequence that reproduces it. With --validate, whether every action keeps
// the programs' behaviour (runValidationBench).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct ActionsBenchOptions {
  unsigned episodes = 300;
  unsigned steps = 30;
  unsigned csmithPrograms = 10;  // generator://csmith-v0/<seed> for seeds 1..N
  std::uint64_t seed = 1;
  double maxSeconds = 0;        // stop starting episodes after this long (0 = no limit)
  unsigned slowestPasses = 15;  // timing rows in the table (JSON has every pass)
  bool json = false;

  // --validate: the validation campaign (compilers/llvm_engine/validation_campaign.h)
  // instead: `episodes` sequences (each action alone, after mem2reg, after
  // sroa, last of a triple, inside a random episode of `steps` actions),
  // every final state's program run and compared with the program as it came.
  bool validate = false;
  unsigned threads = 2;               // sequences stepped and checked at once
  bool asan = true;                   // the ASan build of every state too
  unsigned llvmStressPrograms = 1;    // generator://llvm-stress-v0/<seed>: shown excluded (no main)
  std::vector<std::string> putBack;   // registry passes run as if they were actions
  std::vector<std::string> focus;     // plan sequences for these actions only
  std::vector<std::string> programs;  // only these programs (e.g. "kiln-bench-v0/bfs")
};

// The validation campaign's report: a "run" row (the command, date and
// machine), the "campaign" totals, a row per "family", per "pass" (sequences
// tried, miscompiles found), per "miscompile" (the sequence that reproduces
// it) and per "excluded" program. docs/actions.md is rendered from its JSON.
Result<Report> runValidationBench(const ActionsBenchOptions& options);

Result<Report> runActionsBench(const ActionsBenchOptions& options);

}  // namespace kiln::bench
