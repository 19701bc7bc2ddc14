// The per-process context of the `llvm` session type: the pass table, the
// dataset registry that resolves benchmark URIs, and the parsed-module cache
// with each benchmark's baselines (computed once), so that StartSession on a
// benchmark seen before costs one bitcode read, not a parse, verification and
// printing, and the transition cache (compilers/llvm_session/transition_cache.h) that
// replays steps seen before in any session of the process. Worker-level
// parameters (ServiceContext::handleParameter):
//   llvm.datasets                 -> "name\tsize\tdescription\tbytes\tskipped\trejected"
//                                    per line (size "inf" = generator)
//   llvm.benchmarks  NAME[:LIMIT] -> one URI per line
//   llvm.benchmark_sizes NAME[:LIMIT] -> "uri\tbytes" per line
//   llvm.problems    NAME         -> "module\tkind\treason" per line, kind
//                                    "skipped" (by the scan) or "rejected"
//                                    (LLVM 19 refused it when a session loaded it)
//   service.parsed_module_cache.* -> see compilers/llvm_session/module_cache.h
//   service.transition_cache.*    -> the same keys (set_max_size 0 disables it)
//   service.ready_modules.*       -> the same keys, for modules read ahead of
//                                    the starts that will use them
//                                    (compilers/llvm_session/ready_modules.h)
//   service.program_cache.*       -> the same keys, for the executables built
//                                    last (compilers/llvm_session/program_runs.h)
//   service.program_graph_cache.* -> the same keys, for program graphs by the
//                                    identity of their state
//   llvm.runtime_cpus             -> where Runtime measurements run, e.g.
//                                    "CPU 1 of 0-1 (compile work kept on 0 ...)"
//                                    (programs/runs/measuring_cpus.h)
// Every member is safe to use from the worker's threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/kit/bounded_cache.h>
#include <kiln/kit/service_context.h>
#include "compilers/llvm_engine/baselines.h"
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/pass_table.h"
#include "compilers/llvm_session/module_cache.h"
#include "compilers/llvm_session/program_runs.h"
#include "compilers/llvm_session/ready_modules.h"
#include "compilers/llvm_session/transition_cache.h"
#include "programs/datasets/registry.h"
#include "programs/datasets/shared_registry.h"

namespace kiln::llvm_session {

inline constexpr std::string_view kProgramGraphCachePrefix = "service.program_graph_cache.";

// A program graph's wire form, kept by the identity of the state it is the
// graph of (llvm_engine::ModuleState::identity): sessions that reach the same
// module (every reset on one benchmark, a step another session took) are
// served without walking it again.
class CachedProgramGraph {
 public:
  CachedProgramGraph(std::string key, std::shared_ptr<const std::string> bytes)
      : key_(std::move(key)), bytes_(std::move(bytes)) {}
  const std::string& key() const { return key_; }
  const std::string& bytes() const { return *bytes_; }
  std::uint64_t sizeInBytes() const { return key_.size() + bytes_->size(); }

 private:
  std::string key_;
  std::shared_ptr<const std::string> bytes_;  // shared with the state that built it
};

class LlvmContext : public ServiceContext {
 public:
  // `datasets` is the process's registry, shared with its other contexts
  // (programs/datasets/shared_registry.h); none = a registry of this context's own.
  explicit LlvmContext(ContextResources& resources,
                       std::shared_ptr<datasets::SharedDatasetRegistry> datasets = nullptr);

  // Builds the pass table and takes the process's dataset registry (default
  // datasets and the operator's corpora; file:// below the worker's
  // --allow-files directories; limits from the worker).
  Status init() override;
  // Benchmark URIs through the dataset registry (file://, benchmark://,
  // generator://, corpora).
  Result<Benchmark> resolveBenchmark(const std::string& uri) override;
  Result<std::string> handleParameter(const std::string& key, const std::string& value) override;
  // The parsed-module and transition caches' setters.
  bool changesSharedState(const std::string& key) const override;
  // A crash caught inside LLVM in this process (llvm_engine::firstCaughtCrash).
  std::optional<std::string> damage() const override { return llvm_engine::firstCaughtCrash(); }

  const std::shared_ptr<const llvm_engine::PassTable>& passes() const { return passes_; }
  ParsedModuleCache& moduleCache() { return moduleCache_; }
  TransitionCache& transitionCache() { return transitionCache_; }
  BoundedCache<CachedProgramGraph>& programGraphCache() { return programGraphCache_; }
  // Applies pass `pass` to `state` through the transition cache.
  Result<StepThroughCache> applyPass(llvm_engine::ModuleState& state, std::size_t pass) {
    return applyPassThroughCache(state, pass, transitionCache_, hitCostModel_, clock());
  }
  // For tests and tools, before any session steps (not synchronized).
  void setHitCostModel(const HitCostModel& model) { hitCostModel_ = model; }

  // The verified module of `benchmark` (bitcode or IR text), from the cache
  // or parsed now and cached. invalidArgument names what is wrong with it.
  Result<std::shared_ptr<const CachedModule>> module(const Benchmark& benchmark);
  // A fresh state of a cached module, its bitcode read (no verification):
  // one read ahead when there is one (ready_modules.h), else read now, so
  // that the session's first step pays for its step alone.
  Result<std::unique_ptr<llvm_engine::ModuleState>> materialize(
      const std::shared_ptr<const CachedModule>& module);
  ReadyModules& readyModules() { return readyModules_; }
  // The module's baselines, computed on first use only.
  Result<llvm_engine::Baselines> baselines(const CachedModule& module) const;
  // Building and running programs (Runtime, Validation); after init().
  ProgramRuns& programs() { return *programs_; }
  // How the benchmark runs: kiln-bench-v0's inputs, a csmith program's, a
  // corpus module's run spec (<module>.run.json), else one run without
  // arguments, linking libm. invalid-argument for a corpus spec that is wrong.
  Result<runs::RunSpec> runSpecFor(const Benchmark& benchmark) const;

 private:
  std::shared_ptr<const llvm_engine::PassTable> passes_;
  std::shared_ptr<datasets::SharedDatasetRegistry> sharedDatasets_;
  std::shared_ptr<const datasets::DatasetRegistry> registry_;
  ParsedModuleCache moduleCache_{256, std::uint64_t{128} << 20};
  TransitionCache transitionCache_{8192, std::uint64_t{64} << 20};
  BoundedCache<CachedProgramGraph> programGraphCache_{1024, std::uint64_t{64} << 20};
  HitCostModel hitCostModel_;
  std::unique_ptr<ProgramRuns> programs_;
  // Last: its reader thread reads with passes_ until it is stopped.
  ReadyModules readyModules_{16, std::uint64_t{4} << 20, 2, std::chrono::milliseconds(2),
                             [this](const CachedModule& module) { return readCached(module); }};

  Result<std::unique_ptr<llvm_engine::ModuleState>> readCached(const CachedModule& module) const;
};

// True if `bytes` start like LLVM bitcode (raw or wrapped); otherwise the
// benchmark is read as IR text.
bool looksLikeBitcode(std::string_view bytes);

// The cache key of a benchmark: its URI and a hash of its bytes, so that a
// URI whose contents changed (a rewritten file, new inline bytes) is parsed
// again instead of served stale.
std::string moduleCacheKey(const std::string& uri, std::string_view bytes);

}  // namespace kiln::llvm_session
