// A corpus with every kind of bad module, served by a worker: each bad
// module gives the session that asks for it a clear invalid-argument naming
// the module and why, is listed with the reason among the dataset's
// problems, and never disturbs a session stepping on a good module.
#include <gtest/gtest.h>

#include <map>

#include <kiln/client/datasets.h>
#include "tests/datasets/bad_modules.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session::testing {
namespace {

using datasets::testing::foreignBitcode;
using datasets::testing::unparsableIr;
using datasets::testing::unverifiableIr;

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

std::unique_ptr<client::Client> connect(LocalCluster& cluster) {
  client::ClientOptions options;
  options.coordinator = cluster.coordinatorEndpoint();
  options.requestTimeout = 60s;
  return std::move(client::Client::connect(options).value());
}

TEST(CorpusProblemsTest, BadModulesAreRefusedNamedListedAndHarmless) {
  ScratchDir root("corpus-problems");
  const std::filesystem::path corpus = root.path() / "corpus";
  const std::string crc32 = readFile(benchPath("crc32"));
  std::filesystem::create_directories(corpus);
  std::filesystem::copy_file(benchPath("crc32"), corpus / "good.bc");
  write(corpus / "truncated.bc", crc32.substr(0, crc32.size() / 2));
  write(corpus / "unparsable.ll", unparsableIr());
  write(corpus / "unverifiable.ll", unverifiableIr());
  write(corpus / "foreign.bc", foreignBitcode("LLVM99.0.0", 0));
  write(corpus / "epoch.bc", foreignBitcode("LLVM99.0.0", 1));
  write(corpus / "nomagic.bc", "this is no bitcode");
  write(root.path() / "outside" / "secret.bc", crc32);
  std::filesystem::create_symlink("../outside/secret.bc", corpus / "escape.bc");

  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.worker.slots = 2;
  options.worker.settings.datasets = {{"mixed", corpus}};
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  auto client = connect(**cluster);

  auto good = client->startSession(llvmOptions("benchmark://mixed/good"));
  ASSERT_TRUE(good.ok()) << good.status().toString();
  std::int64_t steps = 0;
  auto stepGood = [&] {
    auto r = (*good)->step({Value(std::int64_t(steps % 7))},
                           std::vector<std::string>{"IrInstructionCount"});
    ASSERT_TRUE(r.ok()) << "step " << steps << ": " << r.status().toString();
    ++steps;
  };
  stepGood();

  const std::pair<const char*, const char*> bad[] = {
      {"truncated", "not valid LLVM bitcode"},
      {"unparsable", "not valid LLVM IR"},
      {"unverifiable", "does not dominate"},
      {"foreign", "bitcode from another LLVM version: producer 'LLVM99.0.0'"},
      {"epoch", "Incompatible epoch"},
      {"nomagic", "bitcode magic"},
  };
  for (const auto& [module, reason] : bad) {
    const std::string uri = std::string("benchmark://mixed/") + module;
    for (const char* type : {"llvm", "mlgo-inline", "mlgo-compile"}) {
      SCOPED_TRACE(std::string(type) + " on " + uri);
      client::SessionOptions start = llvmOptions(uri);
      start.sessionType = type;
      auto refused = client->startSession(start);
      ASSERT_FALSE(refused.ok());
      EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument)
          << refused.status().toString();
      EXPECT_NE(refused.status().message().find(uri), std::string::npos)
          << refused.status().toString();
      EXPECT_NE(refused.status().message().find(reason), std::string::npos)
          << refused.status().toString();
      EXPECT_EQ(refused.status().message().find(root.path().string()), std::string::npos)
          << refused.status().toString();
      stepGood();
    }
  }
  auto escaped = client->startSession(llvmOptions("benchmark://mixed/escape"));
  EXPECT_EQ(escaped.status().code(), ErrorCode::kNotFound) << escaped.status().toString();
  // A client's own bytes under a corpus URI are refused, but they are not the
  // operator's module: "good" must not be listed as rejected (checked below).
  client::SessionOptions forged = llvmOptions("benchmark://mixed/good");
  forged.program = std::string("BC\xc0\xde not a module", 21);
  EXPECT_FALSE(client->startSession(forged).ok());

  auto listed = client::listDatasets(*client);
  ASSERT_TRUE(listed.ok()) << listed.status().toString();
  bool found = false;
  for (const client::DatasetListing& dataset : *listed) {
    if (dataset.name != "benchmark://mixed") continue;
    found = true;
    EXPECT_EQ(dataset.size, 7);
    EXPECT_EQ(dataset.skipped, 1u);
    EXPECT_EQ(dataset.rejected, std::size(bad));
    EXPECT_GT(dataset.bytes, crc32.size());
  }
  EXPECT_TRUE(found);
  auto problems = client::listProblems(*client, "benchmark://mixed");
  ASSERT_TRUE(problems.ok()) << problems.status().toString();
  std::map<std::string, client::BenchmarkProblemListing> byModule;
  for (const auto& problem : *problems) byModule[problem.module] = problem;
  EXPECT_EQ(byModule.size(), std::size(bad) + 1);
  EXPECT_EQ(byModule["escape.bc"].kind, "skipped");
  for (const auto& [module, reason] : bad) {
    SCOPED_TRACE(module);
    EXPECT_EQ(byModule[module].kind, "rejected");
    EXPECT_NE(byModule[module].reason.find(reason), std::string::npos) << byModule[module].reason;
    EXPECT_EQ(byModule[module].reason.find(root.path().string()), std::string::npos);
  }
  auto sizes = client::listBenchmarkSizes(*client, "benchmark://mixed", 1);
  ASSERT_TRUE(sizes.ok()) << sizes.status().toString();
  ASSERT_EQ(sizes->size(), 1u);
  EXPECT_EQ((*sizes)[0].uri, "benchmark://mixed/epoch");
  EXPECT_GT((*sizes)[0].bytes, 0u);
  stepGood();
}

TEST(CorpusProblemsTest, ACorruptDescriptionStopsTheWorkerWithWhy) {
  ScratchDir root("corpus-corrupt");
  write(root.path() / "corpus_description.json", R"({"modules": ["a", )");
  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.worker.settings.datasets = {{"corrupt", root.path()}};
  auto cluster = LocalCluster::start(options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument) << cluster.status().toString();
  EXPECT_NE(cluster.status().message().find("corpus_description.json is not valid JSON"),
            std::string::npos)
      << cluster.status().toString();
}

}  // namespace
}  // namespace kiln::llvm_session::testing
