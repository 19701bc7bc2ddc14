// Corpora registered by name: plain directories of .bc/.ll files and MLGO
// corpora described by corpus_description.json, both built by the test.
#include <gtest/gtest.h>

#include <map>

#include "programs/datasets/registry.h"
#include "tests/datasets/test_util.h"

namespace kiln::datasets {
namespace {

using testing::sampleBitcode;
using testing::TempDir;
using testing::writeFile;

Result<DatasetRegistry> registryWith(std::vector<CorpusDirectory> corpora) {
  DatasetConfig config;
  config.corpora = std::move(corpora);
  return DatasetRegistry::create(std::move(config));
}

TEST(CorpusTest, DirectoryCorpusListsAndResolves) {
  TempDir dir;
  writeFile(dir.path() / "a.bc", sampleBitcode());
  writeFile(dir.path() / "sub/b.ll", "define void @b() {\n  ret void\n}\n");
  writeFile(dir.path() / "sub/deeper/c.bc", sampleBitcode());
  writeFile(dir.path() / "notes.txt", "ignored");
  writeFile(dir.path() / "bad name.bc", sampleBitcode());  // not valid in a URI: skipped
  auto registry = registryWith({{"mine", dir.path()}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();

  auto datasets = registry->list();
  ASSERT_EQ(datasets.size(), 4u);
  EXPECT_EQ(datasets[3].name, "benchmark://mine");
  EXPECT_EQ(datasets[3].size, 3);
  EXPECT_NE(datasets[3].description.find("1 skipped"), std::string::npos)
      << datasets[3].description;

  auto uris = registry->benchmarkUris("benchmark://mine");
  ASSERT_TRUE(uris.ok()) << uris.status().toString();
  EXPECT_EQ(*uris, (std::vector<std::string>{"benchmark://mine/a", "benchmark://mine/sub/b",
                                             "benchmark://mine/sub/deeper/c"}));
  auto a = registry->resolve("benchmark://mine/a");
  ASSERT_TRUE(a.ok()) << a.status().toString();
  EXPECT_EQ(a->format, Format::kBitcode);
  EXPECT_EQ(a->bytes, sampleBitcode());
  auto b = registry->resolve("benchmark://mine/sub/b");
  ASSERT_TRUE(b.ok()) << b.status().toString();
  EXPECT_EQ(b->format, Format::kIr);
  EXPECT_EQ(registry->resolve("benchmark://mine/notes").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(registry->resolve("benchmark://mine/sub").status().code(), ErrorCode::kNotFound);
}

TEST(CorpusTest, SymlinksOutOfACorpusAreNotRead) {
  TempDir dir;
  writeFile(dir.path() / "corpus" / "a.bc", sampleBitcode());
  writeFile(dir.path() / "outside" / "secret.bc", sampleBitcode());
  std::filesystem::create_symlink("../outside/secret.bc", dir.path() / "corpus" / "relative.bc");
  std::filesystem::create_symlink(dir.path() / "outside" / "secret.bc",
                                  dir.path() / "corpus" / "absolute.bc");
  std::filesystem::create_directories(dir.path() / "corpus" / "sub");
  std::filesystem::create_symlink("../a.bc", dir.path() / "corpus" / "sub" / "inside.bc");
  auto registry = registryWith({{"linked", dir.path() / "corpus"}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();
  EXPECT_TRUE(registry->resolve("benchmark://linked/a").ok());
  auto inside = registry->resolve("benchmark://linked/sub/inside");
  EXPECT_TRUE(inside.ok()) << inside.status().toString();
  // Links out of the corpus are left out by the scan, with the reason.
  for (const char* uri : {"benchmark://linked/relative", "benchmark://linked/absolute"}) {
    auto refused = registry->resolve(uri);
    EXPECT_EQ(refused.status().code(), ErrorCode::kNotFound) << uri;
  }
  EXPECT_EQ(registry->list()[3].skipped, 2u);
  auto problems = registry->problems("benchmark://linked");
  ASSERT_TRUE(problems.ok());
  for (const BenchmarkProblem& problem : *problems) {
    EXPECT_EQ(problem.reason, "a symlink that leads out of the corpus") << problem.module;
  }
}

TEST(CorpusTest, MlgoModulesLinkedOutOfTheCorpusAreNotRead) {
  TempDir dir;
  writeFile(dir.path() / "corpus" / "corpus_description.json", R"({"modules": ["in", "out"]})");
  writeFile(dir.path() / "corpus" / "in.bc", sampleBitcode());
  writeFile(dir.path() / "outside" / "secret.bc", sampleBitcode());
  std::filesystem::create_symlink("../outside/secret.bc", dir.path() / "corpus" / "out.bc");
  auto registry = registryWith({{"mlgo-linked", dir.path() / "corpus"}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();
  EXPECT_TRUE(registry->resolve("benchmark://mlgo-linked/in").ok());
  EXPECT_EQ(registry->resolve("benchmark://mlgo-linked/out").status().code(), ErrorCode::kNotFound);
  auto problems = registry->problems("benchmark://mlgo-linked");
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_EQ((*problems)[0].reason, "out.bc is a symlink that leads out of the corpus");
}

TEST(CorpusTest, BitcodeWinsOverTextualTwin) {
  TempDir dir;
  writeFile(dir.path() / "x.bc", sampleBitcode());
  writeFile(dir.path() / "x.ll", "define void @x() {\n  ret void\n}\n");
  auto registry = registryWith({{"twins", dir.path()}});
  ASSERT_TRUE(registry.ok());
  auto x = registry->resolve("benchmark://twins/x");
  ASSERT_TRUE(x.ok()) << x.status().toString();
  EXPECT_EQ(x->format, Format::kBitcode);
}

TEST(CorpusTest, MlgoCorpusListsModulesFromDescription) {
  TempDir dir;
  writeFile(dir.path() / "corpus_description.json",
            R"({"has_thinlto": false, "modules": ["lib/a.cpp.o", "lib/b.cpp.o", "c.o"]})");
  for (const char* module : {"lib/a.cpp.o", "lib/b.cpp.o", "c.o"}) {
    writeFile(dir.path() / (std::string(module) + ".bc"), sampleBitcode());
    writeFile(dir.path() / (std::string(module) + ".cmd"), "-cc1\0-O2");
  }
  // A .bc that the description does not list is not part of the corpus.
  writeFile(dir.path() / "stray.bc", sampleBitcode());
  auto registry = registryWith({{"mlgo", dir.path()}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();
  auto uris = registry->benchmarkUris("benchmark://mlgo");
  ASSERT_TRUE(uris.ok());
  EXPECT_EQ(*uris, (std::vector<std::string>{"benchmark://mlgo/c.o", "benchmark://mlgo/lib/a.cpp.o",
                                             "benchmark://mlgo/lib/b.cpp.o"}));
  EXPECT_NE(registry->list()[3].description.find("MLGO"), std::string::npos);
  auto a = registry->resolve("benchmark://mlgo/lib/a.cpp.o");
  ASSERT_TRUE(a.ok()) << a.status().toString();
  EXPECT_EQ(a->bytes, sampleBitcode());
  EXPECT_EQ(registry->resolve("benchmark://mlgo/stray").status().code(), ErrorCode::kNotFound);
}

TEST(CorpusTest, MlgoThinLtoAndHostileModuleNames) {
  TempDir dir;
  writeFile(dir.path() / "corpus_description.json",
            R"({"has_thinlto": true, "global_command_override": ["-O2"],
                "modules": ["ok", "../escape", "/etc/passwd", "a//b", "missing"]})");
  writeFile(dir.path() / "ok.bc", sampleBitcode());
  auto registry = registryWith({{"thin", dir.path()}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();
  auto info = registry->list()[3];
  EXPECT_EQ(info.size, 1);  // "ok"; the three hostile names and the missing module are skipped
  EXPECT_EQ(info.skipped, 4u);
  EXPECT_NE(info.description.find("ThinLTO"), std::string::npos);
  EXPECT_NE(info.description.find("4 skipped"), std::string::npos) << info.description;
  EXPECT_TRUE(registry->resolve("benchmark://thin/ok").ok());
  EXPECT_EQ(registry->resolve("benchmark://thin/missing").status().code(), ErrorCode::kNotFound);
}

TEST(CorpusTest, TheScanRecordsSizesAndWhatItSkippedWithWhy) {
  TempDir dir;
  const std::string bitcode = sampleBitcode();
  const std::string text = "define void @b() {\n  ret void\n}\n";
  writeFile(dir.path() / "corpus" / "a.bc", bitcode);
  writeFile(dir.path() / "corpus" / "sub" / "b.ll", text);
  writeFile(dir.path() / "corpus" / "bad name.bc", bitcode);
  writeFile(dir.path() / "outside" / "secret.bc", bitcode);
  std::filesystem::create_symlink("../outside/secret.bc", dir.path() / "corpus" / "out.bc");
  auto registry = registryWith({{"sized", dir.path() / "corpus"}});
  ASSERT_TRUE(registry.ok()) << registry.status().toString();
  DatasetInfo info = registry->list()[3];
  EXPECT_EQ(info.size, 2);
  EXPECT_EQ(info.bytes, bitcode.size() + text.size());
  EXPECT_EQ(info.skipped, 2u);
  EXPECT_EQ(info.rejected, 0u);
  EXPECT_GT(registry->list()[0].bytes, 0u);  // kiln-bench-v0's own bitcode

  auto listed = registry->benchmarks("benchmark://sized");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].uri, "benchmark://sized/a");
  EXPECT_EQ((*listed)[0].bytes, bitcode.size());
  EXPECT_EQ((*listed)[1].bytes, text.size());
  EXPECT_EQ(registry->benchmarks("benchmark://sized", 1)->size(), 1u);

  auto problems = registry->problems("benchmark://sized");
  ASSERT_TRUE(problems.ok());
  std::map<std::string, BenchmarkProblem> byModule;
  for (const BenchmarkProblem& p : *problems) byModule[p.module] = p;
  ASSERT_EQ(byModule.size(), 2u);
  EXPECT_EQ(byModule["bad name.bc"].reason, "the name is not valid in a benchmark URI");
  EXPECT_EQ(byModule["out.bc"].reason, "a symlink that leads out of the corpus");
  EXPECT_EQ(byModule["out.bc"].kind, "skipped");
  EXPECT_EQ(registry->problems("generator://csmith-v0").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry->problems("benchmark://nothing").status().code(), ErrorCode::kNotFound);
}

TEST(CorpusTest, RejectionsAreKeptOncePerModuleAndOnlyForCorpusModules) {
  TempDir dir;
  writeFile(dir.path() / "a.bc", sampleBitcode());
  writeFile(dir.path() / "b.bc", sampleBitcode());
  auto registry = registryWith({{"r", dir.path()}});
  ASSERT_TRUE(registry.ok());
  registry->recordRejection("benchmark://r/a", "not valid LLVM bitcode: cut short");
  registry->recordRejection("benchmark://r/a", "again");
  registry->recordRejection("benchmark://r/nothing", "not in the corpus");
  registry->recordRejection("benchmark://kiln-bench-v0/crc32", "not a corpus");
  registry->recordRejection("file:///tmp/x.bc", "not a corpus");
  EXPECT_EQ(registry->list()[3].rejected, 1u);
  auto problems = registry->problems("benchmark://r");
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_EQ((*problems)[0].module, "a");
  EXPECT_EQ((*problems)[0].kind, "rejected");
  EXPECT_EQ((*problems)[0].reason, "not valid LLVM bitcode: cut short");
}

TEST(CorpusTest, ReadErrorsDoNotNameTheOperatorsDirectory) {
  TempDir dir;
  writeFile(dir.path() / "fake.bc", "no magic here");
  auto registry = registryWith({{"quiet", dir.path()}});
  ASSERT_TRUE(registry.ok());
  auto fake = registry->resolve("benchmark://quiet/fake");
  ASSERT_FALSE(fake.ok());
  EXPECT_EQ(fake.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fake.status().message().find(dir.path().string()), std::string::npos)
      << fake.status().toString();
  EXPECT_NE(fake.status().message().find("benchmark://quiet/fake.bc"), std::string::npos)
      << fake.status().toString();
}

TEST(CorpusTest, ModuleFlagsComeFromTheCmdFile) {
  TempDir dir;
  writeFile(dir.path() / "corpus_description.json", R"({"modules": ["with", "without"]})");
  writeFile(dir.path() / "with.bc", sampleBitcode());
  writeFile(dir.path() / "without.bc", sampleBitcode());
  writeFile(dir.path() / "with.cmd", std::string("-O2\0--target=x86_64-linux-gnu\0\0-fPIC", 36));
  auto registry = registryWith({{"flags", dir.path()}});
  ASSERT_TRUE(registry.ok());
  const std::string own = sampleBitcode();
  auto with = registry->moduleFlags("benchmark://flags/with", own);
  ASSERT_TRUE(with.ok()) << with.status().toString();
  EXPECT_EQ(*with, (std::vector<std::string>{"-O2", "--target=x86_64-linux-gnu", "-fPIC"}));
  EXPECT_TRUE(registry->moduleFlags("benchmark://flags/without", own)->empty());
  EXPECT_TRUE(registry->moduleFlags("benchmark://kiln-bench-v0/crc32", own)->empty());
  // A client's own bytes under the corpus's URI: the module's flags do not
  // describe them.
  EXPECT_TRUE(registry->moduleFlags("benchmark://flags/with", own + "x")->empty());
  EXPECT_EQ(splitCommandFile(std::string("a\0b\n\0\0", 6)), (std::vector<std::string>{"a", "b"}));
}

TEST(CorpusTest, MalformedDescriptionsAreRejected) {
  for (const char* json : {"not json", "[1, 2]", R"({"modules": 3})", R"({"modules": [1]})",
                           R"({"has_thinlto": false})"}) {
    TempDir dir;
    writeFile(dir.path() / "corpus_description.json", json);
    auto registry = registryWith({{"broken", dir.path()}});
    ASSERT_FALSE(registry.ok()) << json;
    EXPECT_EQ(registry.status().code(), ErrorCode::kInvalidArgument) << json;
    EXPECT_NE(registry.status().message().find("corpus_description.json"), std::string::npos);
  }
}

TEST(CorpusTest, BadCorpusConfigurations) {
  TempDir dir;
  auto missing = registryWith({{"gone", dir.path() / "nope"}});
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  auto badName = registryWith({{"bad/name", dir.path()}});
  EXPECT_EQ(badName.status().code(), ErrorCode::kInvalidArgument);
  auto clash = registryWith({{"kiln-bench-v0", dir.path()}});
  EXPECT_EQ(clash.status().code(), ErrorCode::kInvalidArgument);
  auto twice = registryWith({{"x", dir.path()}, {"x", dir.path()}});
  EXPECT_EQ(twice.status().code(), ErrorCode::kInvalidArgument);
}

TEST(CorpusTest, EmptyDirectoryIsAnEmptyDataset) {
  TempDir dir;
  auto registry = registryWith({{"empty", dir.path()}});
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ(registry->list()[3].size, 0);
  auto uris = registry->benchmarkUris("benchmark://empty");
  ASSERT_TRUE(uris.ok());
  EXPECT_TRUE(uris->empty());
}

}  // namespace
}  // namespace kiln::datasets
