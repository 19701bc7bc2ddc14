// Modules checked as a session loads them (compilers/llvm_engine/module_check.h), and
// `kiln datasets check`'s corpus walk (programs/datasets/corpus_check.h), on modules
// LLVM 19 refuses for each reason there is.
#include <gtest/gtest.h>

#include <map>

#include "compilers/llvm_engine/module_check.h"
#include "programs/datasets/corpus_check.h"
#include "tests/datasets/bad_modules.h"
#include "tests/datasets/test_util.h"

namespace kiln::datasets {
namespace {

using namespace testing;

TEST(ModuleCheckTest, GoodModulesPass) {
  EXPECT_TRUE(llvm_engine::checkModule(sampleBitcode(), "crc32").ok());
  EXPECT_TRUE(llvm_engine::checkModule("define void @f() {\n  ret void\n}\n", "f.ll").ok());
  auto producer = llvm_engine::bitcodeProducer(sampleBitcode());
  ASSERT_TRUE(producer.has_value());
  EXPECT_TRUE(producer->starts_with("LLVM19")) << *producer;
}

TEST(ModuleCheckTest, EachReasonIsNamed) {
  const std::string bitcode = sampleBitcode();
  const struct {
    const char* what;
    std::string bytes;
    const char* expected;  // in the message
  } cases[] = {
      {"empty", "", "is empty"},
      {"truncated bitcode", bitcode.substr(0, bitcode.size() / 2), "not valid LLVM bitcode"},
      {"IR that does not parse", unparsableIr(), "not valid LLVM IR"},
      {"IR the verifier refuses", unverifiableIr(), "does not dominate"},
      {"a newer LLVM's bitcode", foreignBitcode("LLVM99.0.0", 0),
       "bitcode from another LLVM version: producer 'LLVM99.0.0'"},
      {"another bitcode epoch", foreignBitcode("LLVM99.0.0", 1), "Incompatible epoch"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Status checked = llvm_engine::checkModule(c.bytes, "benchmark://mine/m");
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.code(), ErrorCode::kInvalidArgument) << checked.toString();
    EXPECT_NE(checked.message().find("benchmark://mine/m"), std::string::npos)
        << checked.toString();
    EXPECT_NE(checked.message().find(c.expected), std::string::npos) << checked.toString();
  }
  EXPECT_EQ(llvm_engine::bitcodeProducer(foreignBitcode("LLVM99.0.0", 0)), "LLVM99.0.0");
  // A parse error of this LLVM's own bitcode blames no other version.
  Status own = llvm_engine::explainForeignBitcode(invalidArgument("cut short"), bitcode);
  EXPECT_EQ(own.message(), "cut short");
}

TEST(CorpusCheckTest, ListsEveryProblemWithItsReason) {
  TempDir dir;
  const std::string bitcode = sampleBitcode();
  writeFile(dir.path() / "corpus_description.json",
            R"({"modules": ["good", "truncated", "foreign", "missing", "../escape", "text"]})");
  writeFile(dir.path() / "good.bc", bitcode);
  writeFile(dir.path() / "truncated.bc", bitcode.substr(0, 100));
  writeFile(dir.path() / "foreign.bc", foreignBitcode("LLVM99.0.0", 0));
  writeFile(dir.path() / "text.bc", "this is no bitcode");
  std::size_t calls = 0;
  auto report = checkCorpus(dir.path(), 1 << 20, [&](std::size_t, std::size_t) { ++calls; });
  ASSERT_TRUE(report.ok()) << report.status().toString();
  EXPECT_EQ(report->modules, 4u);
  EXPECT_EQ(calls, 4u);
  EXPECT_EQ(report->accepted, 1u);
  EXPECT_EQ(report->rejected, 3u);
  EXPECT_EQ(report->skipped, 2u);
  EXPECT_FALSE(report->clean());
  std::map<std::string, std::string> reasons;
  for (const BenchmarkProblem& p : report->problems) reasons[p.module] = p.kind + ": " + p.reason;
  EXPECT_NE(reasons["missing"].find("skipped: listed in corpus_description.json, but missing.bc"),
            std::string::npos)
      << reasons["missing"];
  EXPECT_NE(reasons["../escape"].find("not valid in a benchmark URI"), std::string::npos);
  EXPECT_NE(reasons["truncated"].find("rejected: "), std::string::npos);
  EXPECT_NE(reasons["foreign"].find("LLVM99.0.0"), std::string::npos) << reasons["foreign"];
  EXPECT_NE(reasons["text"].find("bitcode magic"), std::string::npos) << reasons["text"];
  // The operator's directory is not in what a worker would pass on.
  for (const auto& [module, reason] : reasons) {
    EXPECT_EQ(reason.find(dir.path().string()), std::string::npos) << reason;
  }

  TempDir clean;
  writeFile(clean.path() / "a.bc", bitcode);
  writeFile(clean.path() / "b.ll", "define void @b() {\n  ret void\n}\n");
  auto good = checkCorpus(clean.path(), 1 << 20);
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(good->clean());
  EXPECT_EQ(good->accepted, 2u);

  TempDir broken;
  writeFile(broken.path() / "corpus_description.json", "{\"modules\": [");
  EXPECT_EQ(checkCorpus(broken.path(), 1 << 20).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::datasets
