// `kiln bench tools`: the agent tools' apply_passes (with its instruction
// count) as LLM trainers call it, against what those trainers did without
// kiln (Compiler-R1 style): a fresh `opt-19 -passes=<list>` subprocess on the
// same module and pass list, then the instructions of its output counted,
// per call. Both measured side by side in one run with 1 and N concurrent
// callers, cold (every call a new benchmark and pass-list start) and with
// shared prefixes (rollouts that extend one prefix on one benchmark), on the
// executor's embedded cluster and on local clusters of 1, 2, ... workers
// reached over --cluster as a remote trainer's service reaches them.
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct ToolsBenchOptions {
  unsigned callers = 4;                    // the "N concurrent callers" rows
  unsigned callsPerCaller = 40;            // per row (also bounded by secondsPerRow)
  double secondsPerRow = 15;               // each of kiln's and opt's measurement of a row
  unsigned passesPerCall = 8;              // every call's pass-list length
  unsigned sharedPrefix = 6;               // shared rows: passes the rollouts of a group share
  unsigned rolloutsPerGroup = 8;           // shared rows: calls extending one prefix
  std::vector<unsigned> workers = {1, 2};  // local clusters for the throughput rows
  std::string opt = "opt-19";
  unsigned seed = 1;
};

// The --quick run: a few seconds a row, 2 callers.
ToolsBenchOptions quickToolsBenchOptions();

Result<Report> runToolsBench(const ToolsBenchOptions& options);

// Instructions in LLVM IR text as IrInstructionCount counts them: every
// line of a function body that is not a label, a comment or its brace.
std::int64_t countIrInstructions(std::string_view irText);

}  // namespace kiln::bench
