// `kiln datasets install debian-mini` end to end, with the Debian archive the
// machine uses: zlib's source fetched through a private apt state, built with
// its own configure and make under bear, extracted into a corpus; a second
// install does nothing, a forced one uses no network; the corpus is served by
// an in-process cluster and an llvm session steps on one of its modules.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <set>

#include <kiln/client/datasets.h>
#include "programs/datasets/debian/dataset_install.h"
#include "tests/support/scratch_dir.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::debian {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Its files, removed at the end.
class ProjectDir : public testsupport::ScratchDir {
 public:
  ProjectDir() : ScratchDir("kiln-debian-install") {}
};

InstallOptions miniOptions(const ProjectDir& dir) {
  InstallOptions options;
  options.dataset = "debian-mini";
  options.cacheDirectory = dir.path() / "cache";
  options.root = dir.path() / "datasets";
  options.jobs = 2;
  options.buildLimits.perStep = std::chrono::seconds(600);
  return options;
}

TEST(DebianInstallNetworkTest, DebianMiniInstallsServesAndSteps) {
  ProjectDir dir;
  std::vector<std::string> stages;
  InstallOptions options = miniOptions(dir);
  options.onStage = [&](const std::string& project, const std::string& stage) {
    stages.push_back(project + ":" + stage);
  };
  auto report = installDataset(options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  ASSERT_EQ(report->projects.size(), 1u);
  const ProjectReport& zlib = report->projects[0];
  ASSERT_TRUE(zlib.status.ok()) << zlib.status.toString();
  EXPECT_EQ(stages, (std::vector<std::string>{"zlib:fetch", "zlib:build", "zlib:extract"}));
  EXPECT_FALSE(zlib.sourceFromCache);
  EXPECT_NE(zlib.version.find("1.2"), std::string::npos) << zlib.version;
  // zlib's library and its example programs: well over a dozen translation units.
  EXPECT_GE(zlib.extracted, 15u);
  EXPECT_EQ(report->modules, zlib.extracted);

  const fs::path corpus = dir.path() / "datasets" / "debian-mini";
  EXPECT_EQ(report->corpus, corpus);
  EXPECT_TRUE(fs::exists(corpus / "corpus_description.json"));
  EXPECT_TRUE(fs::exists(corpus / kInstallRecord));
  std::size_t bitcode = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    if (entry.path().extension() != ".bc") continue;
    ++bitcode;
    fs::path cmd = entry.path();
    cmd.replace_extension(".cmd");
    EXPECT_TRUE(fs::exists(cmd)) << entry.path();
    EXPECT_EQ(fs::relative(entry.path(), corpus).begin()->string(), "zlib") << entry.path();
  }
  EXPECT_EQ(bitcode, zlib.extracted);

  // Installed: the same command again is a no-op; forced, it rebuilds from the cached source.
  auto again = installDataset(miniOptions(dir));
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_TRUE(again->alreadyInstalled);
  InstallOptions forced = miniOptions(dir);
  forced.force = true;
  auto rebuilt = installDataset(forced);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().toString();
  ASSERT_EQ(rebuilt->projects.size(), 1u);
  EXPECT_TRUE(rebuilt->projects[0].sourceFromCache);
  EXPECT_EQ(rebuilt->projects[0].extracted, zlib.extracted);

  LocalClusterOptions clusterOptions;
  clusterOptions.log.level = spdlog::level::off;
  clusterOptions.worker.settings.datasets = {{"debian-mini", corpus}};
  auto cluster = LocalCluster::start(clusterOptions);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  client::ClientOptions clientOptions;
  clientOptions.coordinator = (*cluster)->coordinatorEndpoint();
  clientOptions.requestTimeout = 60s;
  auto client = client::Client::connect(clientOptions);
  ASSERT_TRUE(client.ok()) << client.status().toString();
  auto uris = client::listBenchmarks(**client, "benchmark://debian-mini");
  ASSERT_TRUE(uris.ok()) << uris.status().toString();
  EXPECT_EQ(uris->size(), zlib.extracted);
  std::set<std::string> served(uris->begin(), uris->end());
  std::string deflate;
  for (const std::string& uri : served) {
    if (uri.find("/deflate") != std::string::npos) deflate = uri;
  }
  ASSERT_FALSE(deflate.empty()) << "no deflate module among " << uris->size();

  client::SessionOptions session;
  session.sessionType = "llvm";
  session.benchmark = deflate;
  session.observations = {"IrInstructionCount"};
  auto started = (*client)->startSession(session);
  ASSERT_TRUE(started.ok()) << started.status().toString();
  std::int64_t before = (*started)->initialObservations().at(0).as<std::int64_t>();
  EXPECT_GT(before, 100);
  // Action 0 and a few after it: whatever the passes are, the session stays valid.
  for (std::int64_t action = 0; action < 4; ++action) {
    auto step = (*started)->step({Value(action)}, std::vector<std::string>{"IrInstructionCount"});
    ASSERT_TRUE(step.ok()) << step.status().toString();
    EXPECT_GT(step->observations.at(0).as<std::int64_t>(), 0);
  }
}

}  // namespace
}  // namespace kiln::debian
