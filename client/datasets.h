// Listing the benchmark datasets of a cluster's LLVM workers (public): free
// functions over Client::workerParameter and the `llvm.datasets` /
// `llvm.benchmarks` worker parameters (see llvmsession/llvm_context.h), plus
// the pure parsers of their replies.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"

namespace kiln::client {

struct DatasetListing {
  std::string name;                  // "benchmark://kiln-bench-v0"
  std::optional<std::int64_t> size;  // nullopt: an unbounded generator
  std::string description;
};

// Datasets served by `endpoint`, or by the first worker that hosts the
// "llvm" session type when it is empty.
Result<std::vector<DatasetListing>> listDatasets(Client& client, const std::string& endpoint = "");

// Up to `limit` benchmark URIs of `dataset` (as listDatasets names it).
Result<std::vector<std::string>> listBenchmarks(
    Client& client, const std::string& dataset,
    std::size_t limit = std::numeric_limits<std::size_t>::max(), const std::string& endpoint = "");

// "name\tsize\tdescription" lines (size "inf" = unbounded) -> listings;
// invalidArgument naming the line that is malformed.
Result<std::vector<DatasetListing>> parseDatasetListing(std::string_view text);

}  // namespace kiln::client
