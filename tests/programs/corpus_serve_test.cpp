// A corpus made by extractCorpus, served as --dataset does (the worker's
// OperatorSettings): listed, and stepped by the llvm session type, whose
// passes change its modules (at -O0 too: kiln keeps functions optimizable),
// and started from by the mlgo session types.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <kiln/client/datasets.h>
#include "programs/make/corpus_extract.h"
#include "tests/programs/test_util.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::programs {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::writeFile;

std::int64_t passIndex(const client::Session& session, const std::string& name) {
  const auto& names = session.spaces().actionSpaces.at(0).names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name || names[i].find("(" + name + ")") != std::string::npos) {
      return static_cast<std::int64_t>(i);
    }
  }
  ADD_FAILURE() << "no pass " << name;
  return 0;
}

TEST(CorpusServeTest, AnExtractedCorpusIsServedAndStepped) {
  TempDir dir;
  auto src = dir.path() / "src";
  writeFile(src / "loops/sum.c",
            "int sum(const int* v, int n) { int s = 0; for (int i = 0; i < n; ++i) s += v[i]; "
            "return s; }\nint main(void) { int v[4] = {1, 2, 3, 4}; return sum(v, 4); }\n");
  writeFile(src / "square.c",
            "static int sq(int x) { return x * x; }\n"
            "int main(void) { int t = 0; for (int i = 0; i < 9; ++i) t += sq(i);"
            " return t; }\n");
  writeFile(dir.path() / "compile_commands.json",
            "[{\"directory\": \"" + src.string() +
                "\", \"arguments\": [\"cc\", \"-O2\", \"-c\", \"loops/sum.c\"], \"file\": "
                "\"loops/sum.c\"},\n {\"directory\": \"" +
                src.string() +
                "\", \"arguments\": [\"cc\", \"-c\", \"square.c\"], \"file\": \"square.c\"}]");
  ExtractOptions extract;
  extract.compileCommands = dir.path() / "compile_commands.json";
  extract.output = dir.path() / "corpus";
  extract.jobs = 2;
  auto report = extractCorpus(extract);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  ASSERT_EQ(report->extracted.size(), 2u);

  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.worker.settings.datasets = {{"mine", extract.output}};
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  client::ClientOptions clientOptions;
  clientOptions.coordinator = (*cluster)->coordinatorEndpoint();
  clientOptions.requestTimeout = 60s;
  auto client = client::Client::connect(clientOptions).value();

  auto modules = client::listBenchmarks(*client, "benchmark://mine");
  ASSERT_TRUE(modules.ok()) << modules.status().toString();
  EXPECT_EQ(*modules,
            (std::vector<std::string>{"benchmark://mine/loops/sum", "benchmark://mine/square"}));

  for (const std::string& uri : *modules) {
    client::SessionOptions llvm;
    llvm.sessionType = "llvm";
    llvm.benchmark = uri;
    llvm.observations = {"IrInstructionCount"};
    auto session = client->startSession(llvm);
    ASSERT_TRUE(session.ok()) << uri << ": " << session.status().toString();
    auto before = (*session)->initialObservations().at(0).as<std::int64_t>();
    auto step = (*session)->step({Value(passIndex(**session, "mem2reg"))},
                                 std::vector<std::string>{"IrInstructionCount"});
    ASSERT_TRUE(step.ok()) << uri << ": " << step.status().toString();
    EXPECT_FALSE(step->actionHadNoEffect) << uri;
    EXPECT_LT(step->observations.at(0).as<std::int64_t>(), before) << uri;

    for (const char* type : {"mlgo-inline", "mlgo-regalloc"}) {
      client::SessionOptions mlgo;
      mlgo.sessionType = type;
      mlgo.benchmark = uri;
      auto started = client->startSession(mlgo);
      EXPECT_TRUE(started.ok()) << type << " on " << uri << ": " << started.status().toString();
    }
  }
}

}  // namespace
}  // namespace kiln::programs
