// The URI parser: accepted forms round-trip, hostile strings are refused with
// invalid-argument and a message that says why.
#include "programs/datasets/benchmark_uri.h"

#include <string>

#include <gtest/gtest.h>

namespace kiln::datasets {
namespace {

TEST(BenchmarkUriTest, ParsesDatasetUris) {
  auto uri = parseBenchmarkUri("benchmark://kiln-bench-v0/crc32");
  ASSERT_TRUE(uri.ok()) << uri.status().toString();
  EXPECT_EQ(uri->scheme, "benchmark");
  EXPECT_EQ(uri->dataset, "kiln-bench-v0");
  EXPECT_EQ(uri->name, "crc32");
  EXPECT_EQ(uri->datasetUri(), "benchmark://kiln-bench-v0");
  EXPECT_EQ(uri->toString(), "benchmark://kiln-bench-v0/crc32");

  auto nested = parseBenchmarkUri("benchmark://my_corpus/lib/Support/APInt.cpp.o");
  ASSERT_TRUE(nested.ok()) << nested.status().toString();
  EXPECT_EQ(nested->name, "lib/Support/APInt.cpp.o");

  auto generator = parseBenchmarkUri("generator://csmith-v0/42");
  ASSERT_TRUE(generator.ok());
  EXPECT_EQ(generator->scheme, "generator");
  EXPECT_EQ(generator->name, "42");
}

TEST(BenchmarkUriTest, ParsesFileUris) {
  auto uri = parseBenchmarkUri("file:///tmp/x/prog.bc");
  ASSERT_TRUE(uri.ok()) << uri.status().toString();
  EXPECT_EQ(uri->scheme, "file");
  EXPECT_EQ(uri->dataset, "");
  EXPECT_EQ(uri->name, "/tmp/x/prog.bc");
  EXPECT_EQ(uri->toString(), "file:///tmp/x/prog.bc");
}

TEST(BenchmarkUriTest, RoundTrips) {
  for (const char* text : {"benchmark://a/b", "generator://llvm-stress-v0/0", "file:///a/b.ll",
                           "benchmark://c.d_e-f/g/h/i.j"}) {
    auto uri = parseBenchmarkUri(text);
    ASSERT_TRUE(uri.ok()) << text;
    auto again = parseBenchmarkUri(uri->toString());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *uri);
    EXPECT_EQ(uri->toString(), text);
  }
}

struct Hostile {
  std::string text;
  std::string expectInMessage;
};

class HostileUriTest : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileUriTest, IsRejectedClearly) {
  auto uri = parseBenchmarkUri(GetParam().text);
  ASSERT_FALSE(uri.ok()) << "accepted: " << GetParam().text;
  EXPECT_EQ(uri.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(uri.status().message().find(GetParam().expectInMessage), std::string::npos)
      << uri.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    All, HostileUriTest,
    ::testing::Values(
        Hostile{"", "empty"}, Hostile{"crc32", "no scheme"},
        Hostile{"kiln-bench-v0/crc32", "no scheme"}, Hostile{"://a/b", "empty scheme"},
        Hostile{"Benchmark://a/b", "scheme"}, Hostile{"1x://a/b", "scheme"},
        Hostile{"ben_chmark://a/b", "scheme"}, Hostile{"benchmark://", "empty dataset"},
        Hostile{"benchmark:///x", "empty dataset"}, Hostile{"benchmark://a", "names no benchmark"},
        Hostile{"benchmark://a/", "empty"}, Hostile{"benchmark://a//b", "empty segment"},
        Hostile{"benchmark://a/b/", "empty segment"},
        Hostile{"benchmark://a/../etc/passwd", "'..'"}, Hostile{"benchmark://a/b/../../c", "'..'"},
        Hostile{"benchmark://a/./b", "'.'"}, Hostile{"benchmark://../b", "dataset"},
        Hostile{"benchmark://.hidden/b", "dataset"}, Hostile{"benchmark://a b/c", "space"},
        Hostile{"benchmark://a/b c", "space"},
        Hostile{std::string("benchmark://a/b\0c", 17), "control"},
        Hostile{"benchmark://a/b\nc", "control"}, Hostile{"benchmark://a/b\x7f", "control"},
        Hostile{"benchmark://a/\xc3\xa9", "non-ASCII"}, Hostile{"benchmark://a/%2e%2e", "percent"},
        Hostile{"benchmark://a/b?x=1", "query"}, Hostile{"benchmark://a/b#frag", "fragment"},
        Hostile{"benchmark://a/b\\c", "backslash"}, Hostile{"file://host/x.bc", "file:///"},
        Hostile{"file://x.bc", "file:///"}, Hostile{"file://", "file:///"},
        Hostile{"file:///", "empty"}, Hostile{"file:///a/../etc/x.bc", "'..'"},
        Hostile{"file:////x.bc", "empty segment"}, Hostile{"benchmark:/a/b", "no scheme"},
        Hostile{"benchmark://" + std::string(200, 'a') + "/b", "dataset"},
        Hostile{"benchmark://a/" + std::string(kMaxUriLength, 'b'), "limit"}));

TEST(BenchmarkUriTest, MessagesAreBoundedAndPrintable) {
  std::string hostile = "benchmark://a/" + std::string(3000, 'x') + "\x01";
  auto uri = parseBenchmarkUri(hostile);
  ASSERT_FALSE(uri.ok());
  EXPECT_LT(uri.status().message().size(), 400u);
  for (char c : uri.status().message()) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
}

// A cheap stand-in for the fuzzer: every short string over a hostile alphabet
// must parse or fail without crashing, and accepted ones must round-trip.
TEST(BenchmarkUriTest, ExhaustiveShortStringsAreTotal) {
  const std::string alphabet = std::string("a:/.%\\ ?") + '\0' + "\xff";
  std::string prefixes[] = {"", "benchmark://", "file://", "generator://x/"};
  for (const auto& prefix : prefixes) {
    std::size_t combos = 1;
    for (int i = 0; i < 5; ++i) combos *= alphabet.size();
    for (std::size_t n = 0; n < combos; ++n) {
      std::string text = prefix;
      for (std::size_t k = n; k > 0; k /= alphabet.size()) text += alphabet[k % alphabet.size()];
      auto uri = parseBenchmarkUri(text);
      if (uri.ok()) {
        auto again = parseBenchmarkUri(uri->toString());
        ASSERT_TRUE(again.ok()) << text;
        EXPECT_EQ(*again, *uri);
      } else {
        EXPECT_EQ(uri.status().code(), ErrorCode::kInvalidArgument);
      }
    }
  }
}

TEST(BenchmarkUriTest, DatasetNames) {
  EXPECT_TRUE(isValidDatasetName("kiln-bench-v0"));
  EXPECT_TRUE(isValidDatasetName("a.b_c"));
  EXPECT_FALSE(isValidDatasetName(""));
  EXPECT_FALSE(isValidDatasetName("-x"));
  EXPECT_FALSE(isValidDatasetName("a/b"));
  EXPECT_FALSE(isValidDatasetName(std::string(129, 'a')));
}

}  // namespace
}  // namespace kiln::datasets
