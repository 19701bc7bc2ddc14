// Resolves benchmark URIs to program bytes on a worker: the embedded
// kiln-bench-v0 suite, csmith and llvm-stress generators, registered corpora and
// file:// paths below DatasetConfig::fileAccess. The index is immutable after
// create(), so concurrent resolve() calls from any number of threads are safe;
// the one thing that changes is each corpus's bounded list of modules that
// sessions found LLVM 19 rejects (recordRejection), kept under a lock.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "programs/datasets/corpus_index.h"
#include "programs/datasets/dataset_types.h"

namespace kiln::datasets {

inline constexpr std::string_view kKilnBenchDataset = "kiln-bench-v0";

class DatasetRegistry {
 public:
  // Scans the configured corpora. invalid-argument for a bad or duplicate corpus
  // name, not-found for a missing corpus directory.
  static Result<DatasetRegistry> create(DatasetConfig config);

  // Every dataset, e.g. {"benchmark://kiln-bench-v0", 25, "...", bytes}.
  std::vector<DatasetInfo> list() const;
  // The same benchmarks as benchmarkUris() with each one's size in bytes.
  Result<std::vector<BenchmarkListing>> benchmarks(
      std::string_view dataset, std::size_t limit = std::numeric_limits<std::size_t>::max()) const;
  // The modules of a corpus that its scan skipped and that sessions found
  // LLVM 19 rejects, with the reasons (each list bounded by kMaxProblemsKept).
  // invalid-argument for a generator, not-found for an unknown dataset.
  Result<std::vector<BenchmarkProblem>> problems(std::string_view dataset) const;
  // Notes that a module of a corpus was refused by LLVM 19 (`reason`); URIs
  // outside the corpora are not kept. Thread-safe; a module is kept once.
  void recordRejection(std::string_view uri, const std::string& reason) const;
  // The same for `bytes` LLVM refused under `uri`, kept only if they are the
  // corpus's own module: a client's inline bytes under a corpus URI must not
  // list the operator's module as rejected. Reads the module again (rare path).
  void recordRejectedBytes(std::string_view uri, std::string_view bytes,
                           const std::string& reason) const;
  // The compile arguments of a corpus module (its .cmd) when `bytes` are
  // that module's own; empty for other URIs, for modules without one, and
  // for a client's inline bytes under a corpus URI (its own program, which
  // the module's flags do not describe). Reads the module again.
  Result<std::vector<std::string>> moduleFlags(std::string_view uri, std::string_view bytes) const;
  // The run spec of a corpus module (<module>.run.json), under the same
  // conditions, with a reader of the files beside the module (its
  // "stdin_file"s) that lives as long as the registry; nullopt when there
  // is none.
  struct ModuleRunSpec {
    std::string text;
    std::function<Result<std::string>(const std::string& name, std::uint64_t maxBytes)> readBeside;
  };
  Result<std::optional<ModuleRunSpec>> moduleRunSpec(std::string_view uri,
                                                     std::string_view bytes) const;

  // Up to `limit` URIs of a finite dataset, sorted. `dataset` is as list() names
  // it ("benchmark://kiln-bench-v0"). invalid-argument for generators.
  Result<std::vector<std::string>> benchmarkUris(
      std::string_view dataset, std::size_t limit = std::numeric_limits<std::size_t>::max()) const;

  // The benchmark's bytes. invalid-argument for a malformed URI or an oversized
  // benchmark, not-found for unknown datasets/benchmarks/files, compile-error
  // for a generator seed that does not compile, timeout for a stuck tool,
  // permission-denied for a file outside the allowed directories (or one
  // that a symlink leads out of its directory or corpus).
  Result<BenchmarkBytes> resolve(std::string_view uri) const;

  const DatasetConfig& config() const { return config_; }

 private:
  struct OwnModule {
    const CorpusIndex* corpus;
    const CorpusEntry* entry;
  };
  // The corpus module `uri` names, when `bytes` are its own.
  std::optional<OwnModule> ownModule(std::string_view uri, std::string_view bytes) const;

  // Modules refused by LLVM 19, per corpus: what the sessions found.
  struct Rejections {
    std::mutex mutex;
    std::map<std::string, std::map<std::string, std::string>, std::less<>> byCorpus;
    std::map<std::string, std::uint64_t, std::less<>> counts;
  };
  explicit DatasetRegistry(DatasetConfig config)
      : config_(std::move(config)), rejections_(std::make_unique<Rejections>()) {}
  const CorpusIndex* findCorpus(std::string_view name) const;
  // The corpus of a "benchmark://NAME" dataset name; errors as benchmarkUris().
  Result<const CorpusIndex*> corpusOf(std::string_view dataset) const;
  Result<BenchmarkBytes> resolveBenchmark(const std::string& dataset, const std::string& name,
                                          const std::string& canonical) const;

  DatasetConfig config_;
  std::vector<CorpusIndex> corpora_;
  std::unique_ptr<Rejections> rejections_;
};

}  // namespace kiln::datasets
