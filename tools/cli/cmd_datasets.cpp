// `kiln datasets`: the benchmark datasets of the cluster's LLVM workers (name,
// size, bytes, description), with --benchmarks NAME the URIs of one dataset
// (--sizes: with their bytes), with --problems NAME the modules it skipped or
// rejected and why. With no --coordinator it starts the embedded single-node
// cluster, like `kiln demo`, serving the corpora given with --dataset.
// `kiln datasets check DIR` is tools/cli/cmd_datasets_check.cpp.
#include <fmt/format.h>

#include <kiln/client/datasets.h>
#include "tools/cli/commands.h"
#include "tools/local_cluster/local_cluster.h"
#include "worker/worker_cli.h"

namespace kiln::cli {

namespace {

struct DatasetsOptions {
  std::string coordinator;
  std::string benchmarks;  // dataset whose URIs to list; empty = list datasets
  bool sizes = false;      // with --benchmarks: each one's bytes too
  std::string problems;    // dataset whose skipped and rejected modules to list
  std::size_t limit = 50;
  std::string keyFile;
  OperatorSettings embedded;  // --dataset, for the embedded cluster
};

[[noreturn]] void fail(const Status& status) {
  fmt::print(stderr, "kiln datasets: {}\n", status.toString());
  throw CLI::RuntimeError(1);
}

void runDatasets(const DatasetsOptions& o) {
  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  clientOptions.keys = loadKeyFileOrExit(o.keyFile, "datasets");
  LocalClusterOptions local;
  local.isolateWorkers =
      true;  // a crash in compile work costs a restart (tools/local_cluster/worker_child.h)
  local.workers = 1;
  if (!o.embedded.datasets.empty()) {
    if (!o.coordinator.empty()) {
      fail(
          invalidArgument("--dataset names a corpus for the embedded cluster; a cluster given "
                          "with --coordinator serves what its workers' operators named"));
    }
    if (Status valid = checkOperatorSettings(o.embedded); !valid.ok()) fail(valid);
    local.worker.settings.datasets = o.embedded.datasets;
  }
  auto embedded = connectOrStartLocal(clientOptions, local);
  if (!embedded.ok()) fail(embedded.status());
  if (embedded->cluster) {
    if (Status ready = embedded->cluster->waitUntilReady(std::chrono::seconds(10)); !ready.ok()) {
      fail(ready);
    }
  }
  client::Client& client = *embedded->client;
  if (!o.problems.empty()) {
    auto problems = client::listProblems(client, o.problems);
    if (!problems.ok()) fail(problems.status());
    for (const client::BenchmarkProblemListing& p : *problems) {
      fmt::print("{}\t{}\t{}\n", p.module, p.kind, p.reason);
    }
    if (problems->empty()) fmt::print(stderr, "{}: every module is served\n", o.problems);
    return;
  }
  if (!o.benchmarks.empty() && o.sizes) {
    auto sizes = client::listBenchmarkSizes(client, o.benchmarks, o.limit);
    if (!sizes.ok()) fail(sizes.status());
    for (const client::BenchmarkSize& b : *sizes) fmt::print("{}\t{}\n", b.uri, b.bytes);
    return;
  }
  if (!o.benchmarks.empty()) {
    auto uris = client::listBenchmarks(client, o.benchmarks, o.limit);
    if (!uris.ok()) fail(uris.status());
    for (const std::string& uri : *uris) fmt::print("{}\n", uri);
    return;
  }
  auto datasets = client::listDatasets(client);
  if (!datasets.ok()) fail(datasets.status());
  fmt::print("{:<34} {:>8} {:>12}  {}\n", "DATASET", "SIZE", "BYTES", "DESCRIPTION");
  for (const client::DatasetListing& d : *datasets) {
    std::string description = d.description;
    if (d.rejected > 0) {
      description += fmt::format("; {} rejected by LLVM 19 (see --problems)", d.rejected);
    }
    fmt::print("{:<34} {:>8} {:>12}  {}\n", d.name, d.size ? std::to_string(*d.size) : "inf",
               d.size ? std::to_string(d.bytes) : "-", description);
  }
}

}  // namespace

void addDatasetsCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "datasets", "list the benchmark datasets of the LLVM workers (embedded cluster by default)");
  auto options = std::make_shared<DatasetsOptions>();
  command->add_option("--coordinator", options->coordinator,
                      "use this cluster instead of starting one");
  command->add_option("--benchmarks", options->benchmarks,
                      "list the benchmark URIs of this dataset (e.g. benchmark://kiln-bench-v0)");
  addKeyFileOption(*command, options->keyFile);
  addDatasetOption(*command, options->embedded);
  command->add_option("--limit", options->limit, "at most this many URIs with --benchmarks")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  command->add_flag("--sizes", options->sizes, "with --benchmarks: each benchmark's bytes too");
  command->add_option("--problems", options->problems,
                      "list the modules of this dataset that were skipped or rejected, and why");
  addDatasetsCheckCommand(*command);
#ifdef KILN_WITH_LLVM
  addDatasetsInstallCommand(*command);
#endif
  command->callback([options, command] {
    if (command->get_subcommands().empty()) runDatasets(*options);
  });
}

}  // namespace kiln::cli
