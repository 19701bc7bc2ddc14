// `kiln eval`'s mechanism: runs a built-in search agent (tools/eval/agents.h) on
// every benchmark of a set, one unit of work per benchmark spread over the
// cluster's slots by a client::WorkPool, then measures each best sequence
// once more in a fresh session (IR instructions and .text bytes, and -O0's
// and -Oz's), validates the state it reaches and returns the report
// (tools/eval/report.h). The cluster is an embedded
// single-node one unless a coordinator is given; a cluster of nesting hosts
// only gets an experiment opened for the run.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <kiln/curve_keys.h>
#include <kiln/kit/operator_settings.h>
#include "tools/eval/agents.h"
#include "tools/eval/benchmark_set.h"
#include "tools/eval/report.h"
#include "tools/eval/session_scorer.h"

namespace kiln::eval {

struct EvalOptions {
  std::string coordinator;  // empty: an embedded single-node cluster
  std::optional<ClusterKeys> keys;
  std::optional<std::vector<std::filesystem::path>> allowFiles;  // embedded cluster's
  unsigned slots = 0;     // embedded cluster's slots; 0 = the machine's cores (at least 2)
  unsigned parallel = 0;  // benchmarks at once; 0 = the slots of the cluster's llvm workers
  // Corpora the embedded cluster's worker serves (`--dataset NAME=DIR`);
  // refused with a coordinator, whose operator decides what its workers read.
  std::vector<OperatorDataset> servedDatasets;

  // What to run, in this order: each dataset's benchmarks (a generator's for
  // `generatorSeeds`), then single URIs. At most `perDataset` of each
  // dataset (0 = all of a finite one).
  std::vector<std::string> datasets;
  std::vector<std::string> benchmarks;
  std::optional<SeedRange> generatorSeeds;
  std::size_t perDataset = 0;

  AgentKind agent = AgentKind::kGreedy;
  AgentOptions agentOptions;
  std::uint64_t seed = 0;
  ScoreBudget budget;
  // Run every final state against -O0 (validation_verdict.h); off, the
  // report says "unvalidated" on every line.
  bool validate = true;
};

// Called from the runners' threads as each benchmark finishes (serialized).
using EvalProgress =
    std::function<void(std::size_t done, std::size_t total, const std::string& benchmark)>;

// Runs the evaluation. Failures of single benchmarks (a benchmark that does
// not exist, a lost worker) are in the report; the Status is for a run that
// could not start (no cluster, no llvm workers, nothing to run, no budget).
Result<EvalReport> runEval(const EvalOptions& options, const EvalProgress& progress);

}  // namespace kiln::eval
