// The --keys file of `kiln tools serve`: its format, what it refuses, that a
// key finds its caller and only its own, and that other users may not read it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/scratch_dir.h"
#include "tools/tools_service/api_keys.h"

namespace kiln::tools_service {
namespace {

constexpr const char* kKeyA = "aaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kKeyB = "bbbbbbbbbbbbbbbbbbbbbbbb";

TEST(ApiKeysTest, ParsesKeysCallersAndQuotasSkippingCommentsAndBlankLines) {
  auto keys = ApiKeys::parse(fmt::format("# KEY CALLER ...\n\n{} trainer-a concurrent=4 rate=2.5 "
                                         "batch=8\n  {} trainer-b\n",
                                         kKeyA, kKeyB),
                             "keys");
  ASSERT_TRUE(keys.ok()) << keys.status().toString();
  ASSERT_EQ(keys->keys().size(), 2u);
  const ApiKey* a = keys->find(kKeyA);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->caller, "trainer-a");
  EXPECT_EQ(a->quota.maxConcurrent, 4u);
  EXPECT_DOUBLE_EQ(a->quota.callsPerSecond, 2.5);
  EXPECT_EQ(a->quota.maxBatch, 8u);
  const ApiKey* b = keys->find(kKeyB);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->caller, "trainer-b");
  EXPECT_EQ(b->quota.maxConcurrent, 0u);  // the service's default
}

TEST(ApiKeysTest, FindsNothingForAnotherKeyAPrefixOrAnEmptyOne) {
  auto keys = ApiKeys::parse(fmt::format("{} a\n", kKeyA), "keys");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->find(kKeyB), nullptr);
  EXPECT_EQ(keys->find(std::string(kKeyA).substr(0, 20)), nullptr);
  EXPECT_EQ(keys->find(std::string(kKeyA) + "a"), nullptr);
  EXPECT_EQ(keys->find(""), nullptr);
}

TEST(ApiKeysTest, RefusesBadLinesNamingTheLineAndWhatWasWrong) {
  struct Case {
    std::string text, says;
  };
  const std::vector<Case> cases = {
      {"short a\n", "16 to 256 characters"},
      {fmt::format("{}\n", kKeyA), "caller name"},
      {fmt::format("{} bad/name\n", kKeyA), "caller name 'bad/name'"},
      {fmt::format("{} a speed=3\n", kKeyA), "unknown quota 'speed=3'"},
      {fmt::format("{} a concurrent=0\n", kKeyA), "quota 'concurrent=0'"},
      {fmt::format("{} a rate=x\n", kKeyA), "quota 'rate=x'"},
      {fmt::format("{} a\n{} a\n", kKeyA, kKeyB), "line 2: caller 'a' has a key already"},
      {fmt::format("{} a\n{} b\n", kKeyA, kKeyA), "line 2: this key is also caller 'a''s"},
      {"# nothing\n", "no key in it"},
  };
  for (const Case& c : cases) {
    auto keys = ApiKeys::parse(c.text, "k.txt");
    ASSERT_FALSE(keys.ok()) << c.text;
    EXPECT_EQ(keys.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(keys.status().message().find(c.says), std::string::npos)
        << keys.status().message() << " (wanted: " << c.says << ")";
    EXPECT_NE(keys.status().message().find("--keys k.txt"), std::string::npos);
  }
}

TEST(ApiKeysTest, LoadRefusesAFileOtherUsersMayRead) {
  testsupport::ScratchDir dir("api-keys");
  const auto path = dir.path() / "keys";
  std::ofstream(path) << kKeyA << " a\n";
  ::chmod(path.c_str(), 0644);
  auto open = ApiKeys::load(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos)
      << open.status().message();
  ::chmod(path.c_str(), 0600);
  auto private_ = ApiKeys::load(path);
  ASSERT_TRUE(private_.ok()) << private_.status().toString();
  EXPECT_NE(private_->find(kKeyA), nullptr);
}

}  // namespace
}  // namespace kiln::tools_service
