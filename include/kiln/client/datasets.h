// Listing the benchmark datasets of a cluster's LLVM workers (public): free
// functions over Client::workerParameter and the `llvm.datasets`,
// `llvm.benchmarks`, `llvm.benchmark_sizes` and `llvm.problems` worker
// parameters (see compilers/llvm_session/llvm_context.h), plus the pure parsers of their
// replies.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/client/client.h>

namespace kiln::client {

struct DatasetListing {
  std::string name;                  // "benchmark://kiln-bench-v0"
  std::optional<std::int64_t> size;  // nullopt: an unbounded generator
  std::string description;
  std::uint64_t bytes = 0;     // its modules' total size (0 for generators)
  std::uint64_t skipped = 0;   // files its scan left out
  std::uint64_t rejected = 0;  // modules LLVM 19 refused when a session loaded them
};

struct BenchmarkSize {
  std::string uri;
  std::uint64_t bytes = 0;
};

// A module a dataset does not serve: kind "skipped" (by the worker's scan)
// or "rejected" (LLVM 19 refused it when a session loaded it).
struct BenchmarkProblemListing {
  std::string module;
  std::string kind;
  std::string reason;
};

// Datasets served by `endpoint`, or by the first worker that hosts the
// "llvm" session type when it is empty.
Result<std::vector<DatasetListing>> listDatasets(Client& client, const std::string& endpoint = "");

// Up to `limit` benchmark URIs of `dataset` (as listDatasets names it).
Result<std::vector<std::string>> listBenchmarks(
    Client& client, const std::string& dataset,
    std::size_t limit = std::numeric_limits<std::size_t>::max(), const std::string& endpoint = "");

// The same with each benchmark's size in bytes.
Result<std::vector<BenchmarkSize>> listBenchmarkSizes(
    Client& client, const std::string& dataset,
    std::size_t limit = std::numeric_limits<std::size_t>::max(), const std::string& endpoint = "");

// The modules of `dataset` that are skipped or rejected, with the reasons.
Result<std::vector<BenchmarkProblemListing>> listProblems(Client& client,
                                                          const std::string& dataset,
                                                          const std::string& endpoint = "");

// "name\tsize\tdescription[\tbytes\tskipped\trejected]" lines (size "inf" =
// unbounded) -> listings; invalidArgument naming the line that is malformed.
Result<std::vector<DatasetListing>> parseDatasetListing(std::string_view text);

}  // namespace kiln::client
