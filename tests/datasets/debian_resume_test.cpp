// An install after one that failed part-way keeps the projects that finished
// (their record and every module listed) and clears the rest, so that only
// the missing projects are built again.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "programs/datasets/debian/dataset_install.h"
#include "programs/make/corpus_layout.h"
#include "tests/support/scratch_dir.h"

namespace kiln::debian {
namespace {

namespace fs = std::filesystem;
using testsupport::readFile;
using testsupport::writeFile;

ProjectReport finished(const std::string& project, std::size_t modules) {
  ProjectReport report;
  report.project = project;
  report.package = project + "-src";
  report.version = "1.0-1";
  report.extracted = modules;
  report.skipped = 2;
  return report;
}

class ResumeTest : public ::testing::Test {
 protected:
  // zlib finished (record, two modules); bzip2 finished (record, one
  // module); lz4 was cut off during its extraction (modules, no record);
  // lmdb's record claims a module the description lacks.
  void SetUp() override {
    for (const char* module : {"zlib/adler32", "zlib/crc32", "bzip2/blocksort", "lz4/lz4"}) {
      writeFile(corpus() / (std::string(module) + ".bc"), "BC");
      writeFile(corpus() / (std::string(module) + ".cmd"), "-O2");
    }
    writeFile(corpus() / programs::kCorpusDescriptionFile,
              programs::corpusDescriptionText(
                  {"zlib/adler32", "zlib/crc32", "bzip2/blocksort", "lz4/lz4"}));
    ASSERT_TRUE(writeProjectRecord(corpus(), finished("zlib", 2)).ok());
    ASSERT_TRUE(writeProjectRecord(corpus(), finished("bzip2", 1)).ok());
    ASSERT_TRUE(writeProjectRecord(corpus(), finished("lmdb", 1)).ok());
  }
  fs::path corpus() const { return dir_.path() / "debian-v0"; }

  testsupport::ScratchDir dir_{"kiln-debian-resume"};
};

TEST_F(ResumeTest, KeepsFinishedProjectsAndClearsTheRest) {
  const DatasetSpec* spec = findDataset("debian-v0");
  ASSERT_NE(spec, nullptr);
  auto kept = keepFinishedProjects(*spec, corpus());
  ASSERT_TRUE(kept.ok()) << kept.status().toString();
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[0].project, "zlib");  // the dataset's order
  EXPECT_EQ((*kept)[0].extracted, 2u);
  EXPECT_EQ((*kept)[0].version, "1.0-1");
  EXPECT_TRUE((*kept)[0].keptFromEarlierInstall);
  EXPECT_EQ((*kept)[1].project, "bzip2");

  auto modules =
      programs::parseCorpusDescription(readFile(corpus() / programs::kCorpusDescriptionFile));
  ASSERT_TRUE(modules.ok()) << modules.status().toString();
  EXPECT_EQ(*modules, (std::vector<std::string>{"zlib/adler32", "zlib/crc32", "bzip2/blocksort"}));
  EXPECT_FALSE(fs::exists(corpus() / "lz4"));
  EXPECT_TRUE(fs::exists(corpus() / "zlib" / "crc32.bc"));

  // Kept again by the next install, as long as nothing changed.
  auto again = keepFinishedProjects(*spec, corpus());
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(again->size(), 2u);
}

TEST_F(ResumeTest, NothingFinishedLeavesNoDescription) {
  fs::remove_all(corpus() / ".kiln-projects");
  auto kept = keepFinishedProjects(*findDataset("debian-v0"), corpus());
  ASSERT_TRUE(kept.ok()) << kept.status().toString();
  EXPECT_TRUE(kept->empty());
  EXPECT_FALSE(fs::exists(corpus() / programs::kCorpusDescriptionFile));
  EXPECT_FALSE(fs::exists(corpus() / "zlib"));
}

TEST_F(ResumeTest, AnUnreadableDescriptionIsRefused) {
  writeFile(corpus() / programs::kCorpusDescriptionFile, "{not json");
  auto kept = keepFinishedProjects(*findDataset("debian-v0"), corpus());
  EXPECT_EQ(kept.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::debian
