#include <kiln/client/datasets.h>
#include "client/channel.h"
#include "client/lease_keeper.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace kiln::client {

namespace {

Result<std::string> llvmWorker(Client& client, const std::string& endpoint) {
  if (!endpoint.empty()) return endpoint;
  KILN_ASSIGN_OR_RETURN(std::vector<WorkerStatus> workers, client.listCluster());
  for (const WorkerStatus& worker : workers) {
    const auto& types = worker.sessionTypes;
    if (std::find(types.begin(), types.end(), "llvm") != types.end()) return worker.endpoint;
  }
  return notFound(fmt::format("none of the cluster's {} workers serves the 'llvm' session type",
                              workers.size()));
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty()) out.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t tab = line.find('\t');
    out.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return out;
    line.remove_prefix(tab + 1);
  }
}

Result<std::uint64_t> parseCount(std::string_view text, std::string_view line) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return invalidArgument(fmt::format("line '{}' has a bad count '{}'", line, text));
  }
  return value;
}

std::string benchmarksQuery(const std::string& dataset, std::size_t limit) {
  std::string value = dataset;
  if (limit != std::numeric_limits<std::size_t>::max()) value += fmt::format(":{}", limit);
  return value;
}

}  // namespace

Result<std::vector<DatasetListing>> parseDatasetListing(std::string_view text) {
  std::vector<DatasetListing> out;
  for (std::string_view line : lines(text)) {
    const std::size_t first = line.find('\t');
    const std::size_t second = first == std::string_view::npos ? first : line.find('\t', first + 1);
    if (second == std::string_view::npos) {
      return invalidArgument(
          fmt::format("dataset line '{}' is not 'name<TAB>size<TAB>description'", line));
    }
    DatasetListing listing;
    listing.name = std::string(line.substr(0, first));
    const std::string_view size = line.substr(first + 1, second - first - 1);
    if (size != "inf") {
      std::int64_t value = 0;
      auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), value);
      if (error != std::errc() || end != size.data() + size.size() || value < 0) {
        return invalidArgument(fmt::format("dataset line '{}' has a bad size '{}'", line, size));
      }
      listing.size = value;
    }
    std::string_view rest = line.substr(second + 1);
    const std::size_t third = rest.find('\t');
    listing.description = std::string(rest.substr(0, third));
    if (third != std::string_view::npos) {
      // Workers since the corpus scan add the counts after the description.
      std::vector<std::string_view> counts = fields(rest.substr(third + 1));
      if (counts.size() != 3) {
        return invalidArgument(
            fmt::format("dataset line '{}' does not end in bytes<TAB>skipped<TAB>rejected", line));
      }
      std::uint64_t* targets[] = {&listing.bytes, &listing.skipped, &listing.rejected};
      for (std::size_t i = 0; i < 3; ++i) {
        KILN_ASSIGN_OR_RETURN(*targets[i], parseCount(counts[i], line));
      }
    }
    out.push_back(std::move(listing));
  }
  return out;
}

Result<std::vector<DatasetListing>> listDatasets(Client& client, const std::string& endpoint) {
  KILN_ASSIGN_OR_RETURN(std::string worker, llvmWorker(client, endpoint));
  KILN_ASSIGN_OR_RETURN(std::string reply, client.workerParameter(worker, "llvm.datasets", ""));
  return parseDatasetListing(reply);
}

Result<std::vector<std::string>> listBenchmarks(Client& client, const std::string& dataset,
                                                std::size_t limit, const std::string& endpoint) {
  if (dataset.empty()) return invalidArgument("listBenchmarks needs a dataset name");
  KILN_ASSIGN_OR_RETURN(std::string worker, llvmWorker(client, endpoint));
  KILN_ASSIGN_OR_RETURN(std::string reply, client.workerParameter(worker, "llvm.benchmarks",
                                                                  benchmarksQuery(dataset, limit)));
  std::vector<std::string> uris;
  for (std::string_view line : lines(reply)) uris.emplace_back(line);
  return uris;
}

Result<std::vector<BenchmarkSize>> listBenchmarkSizes(Client& client, const std::string& dataset,
                                                      std::size_t limit,
                                                      const std::string& endpoint) {
  if (dataset.empty()) return invalidArgument("listBenchmarkSizes needs a dataset name");
  KILN_ASSIGN_OR_RETURN(std::string worker, llvmWorker(client, endpoint));
  KILN_ASSIGN_OR_RETURN(std::string reply, client.workerParameter(worker, "llvm.benchmark_sizes",
                                                                  benchmarksQuery(dataset, limit)));
  std::vector<BenchmarkSize> out;
  for (std::string_view line : lines(reply)) {
    std::vector<std::string_view> columns = fields(line);
    if (columns.size() != 2) {
      return invalidArgument(fmt::format("benchmark line '{}' is not 'uri<TAB>bytes'", line));
    }
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, parseCount(columns[1], line));
    out.push_back({std::string(columns[0]), bytes});
  }
  return out;
}

Result<std::vector<BenchmarkProblemListing>> listProblems(Client& client,
                                                          const std::string& dataset,
                                                          const std::string& endpoint) {
  if (dataset.empty()) return invalidArgument("listProblems needs a dataset name");
  KILN_ASSIGN_OR_RETURN(std::string worker, llvmWorker(client, endpoint));
  KILN_ASSIGN_OR_RETURN(std::string reply,
                        client.workerParameter(worker, "llvm.problems", dataset));
  std::vector<BenchmarkProblemListing> out;
  for (std::string_view line : lines(reply)) {
    std::vector<std::string_view> columns = fields(line);
    if (columns.size() != 3) {
      return invalidArgument(
          fmt::format("problem line '{}' is not 'module<TAB>kind<TAB>reason'", line));
    }
    out.push_back({std::string(columns[0]), std::string(columns[1]), std::string(columns[2])});
  }
  return out;
}

}  // namespace kiln::client
