// Resolves benchmark URIs to program bytes on a worker: the embedded
// kiln-bench-v0 suite, csmith and llvm-stress generators, registered corpora and
// file:// paths below DatasetConfig::fileAccess. Immutable after create(), so concurrent resolve()
// calls from any number of threads are safe.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "datasets/corpus_index.h"
#include "datasets/dataset_types.h"

namespace kiln::datasets {

inline constexpr std::string_view kKilnBenchDataset = "kiln-bench-v0";

class DatasetRegistry {
 public:
  // Scans the configured corpora. invalid-argument for a bad or duplicate corpus
  // name, not-found for a missing corpus directory.
  static Result<DatasetRegistry> create(DatasetConfig config);

  // Every dataset, e.g. {"benchmark://kiln-bench-v0", 25, "..."}.
  std::vector<DatasetInfo> list() const;

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
  explicit DatasetRegistry(DatasetConfig config) : config_(std::move(config)) {}
  const CorpusIndex* findCorpus(std::string_view name) const;
  Result<BenchmarkBytes> resolveBenchmark(const std::string& dataset, const std::string& name,
                                          const std::string& canonical) const;

  DatasetConfig config_;
  std::vector<CorpusIndex> corpora_;
};

}  // namespace kiln::datasets
