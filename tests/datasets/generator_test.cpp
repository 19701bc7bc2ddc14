// Generators with the real tools (csmith, clang-19, llvm-stress-19): determinism
// per seed, clean scratch space, and clear failures from fake tools that break
// or hang. Labelled integration: each case runs external programs.
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "programs/datasets/file_source.h"
#include "programs/datasets/generators.h"
#include "programs/datasets/registry.h"
#include "tests/datasets/test_util.h"

namespace kiln::datasets {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::writeFile;

class GeneratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.clang = KILN_TEST_CLANG;
    config_.csmith = KILN_TEST_CSMITH;
    config_.llvmStress = KILN_TEST_LLVM_STRESS;
    config_.csmithIncludeDir = KILN_TEST_CSMITH_INCLUDE;
    config_.scratchDirectory = scratch_.path();
    config_.generatorTimeout = 30s;
    config_.compileTimeout = 60s;
  }
  bool haveTools() const {
    return !std::string(KILN_TEST_CLANG).empty() && !std::string(KILN_TEST_CSMITH).empty() &&
           std::filesystem::exists(std::string(KILN_TEST_CSMITH_INCLUDE) + "/csmith.h");
  }
  bool scratchIsEmpty() const { return std::filesystem::is_empty(scratch_.path()); }
  DatasetRegistry registry() {
    auto r = DatasetRegistry::create(config_);
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return std::move(r).value();
  }

  TempDir scratch_;
  TempDir tools_;
  DatasetConfig config_;
};

TEST_F(GeneratorTest, CsmithIsDeterministicPerSeed) {
  if (!haveTools()) GTEST_SKIP() << "csmith, its headers or clang-19 are not installed";
  auto reg = registry();
  auto first = reg.resolve("generator://csmith-v0/42");
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_EQ(first->uri, "generator://csmith-v0/42");
  EXPECT_EQ(first->format, Format::kBitcode);
  EXPECT_TRUE(looksLikeBitcode(first->bytes));
  auto second = reg.resolve("generator://csmith-v0/42");
  ASSERT_TRUE(second.ok()) << second.status().toString();
  EXPECT_EQ(first->bytes, second->bytes);
  auto other = reg.resolve("generator://csmith-v0/43");
  ASSERT_TRUE(other.ok()) << other.status().toString();
  EXPECT_NE(first->bytes, other->bytes);
  EXPECT_TRUE(scratchIsEmpty());
}

TEST_F(GeneratorTest, ConcurrentCsmithCallsShareNoScratchFiles) {
  if (!haveTools()) GTEST_SKIP() << "csmith, its headers or clang-19 are not installed";
  auto reg = registry();
  std::vector<std::string> bytes(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    threads.emplace_back([&, i] {
      auto result = reg.resolve("generator://csmith-v0/77");
      if (result.ok()) bytes[i] = result->bytes;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& b : bytes) {
    EXPECT_FALSE(b.empty());
    EXPECT_EQ(b, bytes[0]);
  }
  EXPECT_TRUE(scratchIsEmpty());
}

TEST_F(GeneratorTest, LlvmStressIsDeterministicPerSeed) {
  if (std::string(KILN_TEST_LLVM_STRESS).empty()) GTEST_SKIP() << "llvm-stress-19 not installed";
  auto reg = registry();
  auto first = reg.resolve("generator://llvm-stress-v0/7");
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_EQ(first->format, Format::kIr);
  EXPECT_NE(first->bytes.find("define"), std::string::npos);
  auto second = reg.resolve("generator://llvm-stress-v0/7");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->bytes, second->bytes);
  auto other = reg.resolve("generator://llvm-stress-v0/8");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(first->bytes, other->bytes);
  EXPECT_TRUE(scratchIsEmpty());
}

TEST_F(GeneratorTest, SeedThatDoesNotCompileIsACompileError) {
  if (std::string(KILN_TEST_CLANG).empty()) GTEST_SKIP() << "clang-19 not installed";
  // A stand-in csmith whose program is not C, so clang fails like on a bad seed.
  auto fake = tools_.path() / "fake-csmith";
  writeFile(fake, "#!/bin/sh\necho 'int main( { return 0; }'\n", true);
  config_.csmith = fake;
  auto result = registry().resolve("generator://csmith-v0/1234");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(result.status().message().find("seed 1234"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("error"), std::string::npos)
      << "stderr tail expected: " << result.status().message();
  EXPECT_TRUE(scratchIsEmpty());
}

TEST_F(GeneratorTest, FailingGeneratorIsACompileErrorWithItsStderr) {
  auto fake = tools_.path() / "broken-csmith";
  writeFile(fake, "#!/bin/sh\necho 'csmith: out of luck' >&2\nexit 3\n", true);
  config_.csmith = fake;
  auto result = registry().resolve("generator://csmith-v0/5");
  EXPECT_EQ(result.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(result.status().message().find("out of luck"), std::string::npos);
  EXPECT_NE(result.status().message().find("exited with code 3"), std::string::npos);
}

TEST_F(GeneratorTest, HungGeneratorTimesOutWithinBound) {
  auto fake = tools_.path() / "slow-stress";
  writeFile(fake, "#!/bin/sh\nsleep 30\n", true);
  config_.llvmStress = fake;
  config_.generatorTimeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto result = registry().resolve("generator://llvm-stress-v0/9");
  EXPECT_EQ(result.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(result.status().message().find("seed 9"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(scratchIsEmpty());
}

TEST_F(GeneratorTest, MissingToolIsNotFoundAndNamesIt) {
  config_.llvmStress = "kiln-no-such-llvm-stress";
  auto result = registry().resolve("generator://llvm-stress-v0/1");
  EXPECT_EQ(result.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(result.status().message().find("kiln-no-such-llvm-stress"), std::string::npos);
}

TEST_F(GeneratorTest, OversizedGeneratedModuleIsRefused) {
  if (std::string(KILN_TEST_LLVM_STRESS).empty()) GTEST_SKIP() << "llvm-stress-19 not installed";
  config_.maxBenchmarkBytes = 100;
  auto result = registry().resolve("generator://llvm-stress-v0/1");
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("size limit"), std::string::npos);
}

}  // namespace
}  // namespace kiln::datasets
