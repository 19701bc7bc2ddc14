// An operator's corpus (--dataset NAME=DIR, include/kiln/kit/operator_settings.h) served by
// a worker: listed with its modules, and started from by the llvm and
// mlgo-inline session types as benchmark://NAME/<module>.
#include <gtest/gtest.h>

#include <kiln/client/datasets.h>
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session::testing {
namespace {

TEST(OperatorDatasetTest, AWorkersCorpusIsListedAndServedToEverySessionType) {
  ScratchDir corpus("operator-dataset");
  std::filesystem::create_directories(corpus.path() / "sub");
  std::filesystem::copy_file(benchPath("crc32"), corpus.path() / "crc32.bc");
  std::filesystem::copy_file(benchPath("quicksort"), corpus.path() / "sub" / "quicksort.bc");

  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.worker.settings.datasets = {{"mine", corpus.path()}};
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  client::ClientOptions clientOptions;
  clientOptions.coordinator = (*cluster)->coordinatorEndpoint();
  clientOptions.requestTimeout = 60s;
  auto client = client::Client::connect(clientOptions).value();

  auto listed = client::listDatasets(*client);
  ASSERT_TRUE(listed.ok()) << listed.status().toString();
  bool found = false;
  for (const auto& dataset : *listed) {
    if (dataset.name != "benchmark://mine") continue;
    found = true;
    EXPECT_EQ(dataset.size, 2u);
    // Clients learn what is served, not where it lies on the host.
    EXPECT_EQ(dataset.description.find(corpus.path().string()), std::string::npos)
        << dataset.description;
  }
  EXPECT_TRUE(found);
  auto modules = client::listBenchmarks(*client, "benchmark://mine");
  ASSERT_TRUE(modules.ok()) << modules.status().toString();
  EXPECT_EQ(*modules,
            (std::vector<std::string>{"benchmark://mine/crc32", "benchmark://mine/sub/quicksort"}));

  // The same module as kiln-bench-v0's: the same first observation.
  auto observe = [&](const std::string& uri) -> std::int64_t {
    auto options = llvmOptions(uri);
    options.observations = {"IrInstructionCount"};
    auto session = client->startSession(options);
    EXPECT_TRUE(session.ok()) << uri << ": " << session.status().toString();
    return session.ok() ? (*session)->initialObservations().at(0).as<std::int64_t>() : -1;
  };
  EXPECT_EQ(observe("benchmark://mine/crc32"), observe(benchUri("crc32")));
  EXPECT_GT(observe("benchmark://mine/sub/quicksort"), 0);

  client::SessionOptions inline_;
  inline_.sessionType = "mlgo-inline";
  inline_.benchmark = "benchmark://mine/crc32";
  auto mlgo = client->startSession(inline_);
  EXPECT_TRUE(mlgo.ok()) << mlgo.status().toString();

  auto missing = client->startSession(llvmOptions("benchmark://mine/nothing-here"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound) << missing.status().toString();
}

}  // namespace
}  // namespace kiln::llvm_session::testing
