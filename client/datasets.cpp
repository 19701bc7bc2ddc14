#include "client/datasets.h"
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
    listing.description = std::string(line.substr(second + 1));
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
  std::string value = dataset;
  if (limit != std::numeric_limits<std::size_t>::max()) value += fmt::format(":{}", limit);
  KILN_ASSIGN_OR_RETURN(std::string reply,
                        client.workerParameter(worker, "llvm.benchmarks", value));
  std::vector<std::string> uris;
  for (std::string_view line : lines(reply)) uris.emplace_back(line);
  return uris;
}

}  // namespace kiln::client
