// The registry: listing, the embedded kiln-bench-v0 suite, file:// benchmarks and
// their failure modes, and concurrent resolution.
#include "programs/datasets/registry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "programs/datasets/file_source.h"
#include "programs/datasets/generators.h"
#include "tests/datasets/test_util.h"

namespace kiln::datasets {
namespace {

using testing::sampleBitcode;
using testing::TempDir;
using testing::writeFile;

DatasetRegistry makeRegistry(DatasetConfig config = {}) {
  auto registry = DatasetRegistry::create(std::move(config));
  EXPECT_TRUE(registry.ok()) << registry.status().toString();
  return std::move(registry).value();
}

// A registry that reads file:// below `directory` only.
DatasetRegistry allowing(const std::filesystem::path& directory, DatasetConfig config = {}) {
  config.fileAccess.roots = {directory};
  return makeRegistry(std::move(config));
}

TEST(RegistryTest, ListsBuiltInDatasets) {
  auto registry = makeRegistry();
  auto datasets = registry.list();
  ASSERT_EQ(datasets.size(), 3u);
  EXPECT_EQ(datasets[0].name, "benchmark://kiln-bench-v0");
  ASSERT_TRUE(datasets[0].size.has_value());
  EXPECT_GE(*datasets[0].size, 20);
  EXPECT_EQ(datasets[1].name, "generator://csmith-v0");
  EXPECT_FALSE(datasets[1].size.has_value());
  EXPECT_EQ(datasets[2].name, "generator://llvm-stress-v0");
  EXPECT_FALSE(datasets[2].size.has_value());
}

TEST(RegistryTest, KilnBenchSuiteIsEmbeddedAndValid) {
  auto suite = bundled::kilnBenchV0();
  ASSERT_GE(suite.size(), 20u);
  for (std::size_t i = 0; i < suite.size(); ++i) {
    EXPECT_FALSE(suite[i].description.empty()) << suite[i].name;
    EXPECT_TRUE(looksLikeBitcode(std::string_view(
        reinterpret_cast<const char*>(suite[i].bitcode.data()), suite[i].bitcode.size())))
        << suite[i].name;
    if (i > 0) {
      EXPECT_LT(suite[i - 1].name, suite[i].name) << "table must be sorted";
    }
  }
  EXPECT_EQ(bundled::findKilnBenchV0("no-such"), nullptr);
}

TEST(RegistryTest, ResolvesEveryKilnBenchUri) {
  auto registry = makeRegistry();
  auto uris = registry.benchmarkUris("benchmark://kiln-bench-v0");
  ASSERT_TRUE(uris.ok()) << uris.status().toString();
  ASSERT_EQ(uris->size(), bundled::kilnBenchV0().size());
  for (const auto& uri : *uris) {
    auto bytes = registry.resolve(uri);
    ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
    EXPECT_EQ(bytes->uri, uri);
    EXPECT_EQ(bytes->format, Format::kBitcode);
    EXPECT_TRUE(looksLikeBitcode(bytes->bytes));
  }
  auto limited = registry.benchmarkUris("benchmark://kiln-bench-v0", 3);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 3u);
}

TEST(RegistryTest, UnknownNamesAreNotFound) {
  auto registry = makeRegistry();
  EXPECT_EQ(registry.resolve("benchmark://kiln-bench-v0/nope").status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(registry.resolve("benchmark://no-dataset/x").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(registry.resolve("generator://no-gen/1").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(registry.resolve("http://x/y").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry.resolve("benchmark://kiln-bench-v0/../x").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry.benchmarkUris("benchmark://no-dataset").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(registry.benchmarkUris("generator://csmith-v0").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(registry.benchmarkUris("kiln-bench-v0").status().code(), ErrorCode::kInvalidArgument);
}

TEST(RegistryTest, BadSeedsAreInvalid) {
  auto registry = makeRegistry();
  for (const char* uri : {"generator://csmith-v0/abc", "generator://csmith-v0/-1",
                          "generator://csmith-v0/007", "generator://llvm-stress-v0/4294967296",
                          "generator://llvm-stress-v0/99999999999999999999"}) {
    EXPECT_EQ(registry.resolve(uri).status().code(), ErrorCode::kInvalidArgument) << uri;
  }
}

TEST(RegistryTest, FileUris) {
  TempDir dir;
  auto bc = dir.path() / "prog.bc";
  auto ll = dir.path() / "prog.ll";
  writeFile(bc, sampleBitcode());
  writeFile(ll, "define i32 @f() {\n  ret i32 0\n}\n");
  auto registry = allowing(dir.path());

  auto bitcode = registry.resolve("file://" + bc.string());
  ASSERT_TRUE(bitcode.ok()) << bitcode.status().toString();
  EXPECT_EQ(bitcode->format, Format::kBitcode);
  EXPECT_EQ(bitcode->bytes, sampleBitcode());

  auto ir = registry.resolve("file://" + ll.string());
  ASSERT_TRUE(ir.ok()) << ir.status().toString();
  EXPECT_EQ(ir->format, Format::kIr);
  EXPECT_EQ(ir->bytes.substr(0, 6), "define");
}

TEST(RegistryTest, FileUriFailures) {
  TempDir dir;
  auto registry = allowing(dir.path());
  auto missing = registry.resolve("file://" + (dir.path() / "missing.bc").string());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.bc"), std::string::npos);

  std::filesystem::create_directories(dir.path() / "adir.bc");
  auto directory = registry.resolve("file://" + (dir.path() / "adir.bc").string());
  EXPECT_EQ(directory.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);

  auto fifo = dir.path() / "pipe.bc";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(registry.resolve("file://" + fifo.string()).status().code(),
            ErrorCode::kInvalidArgument);

  writeFile(dir.path() / "prog.txt", "text");
  auto badExtension = registry.resolve("file://" + (dir.path() / "prog.txt").string());
  EXPECT_EQ(badExtension.status().code(), ErrorCode::kInvalidArgument);

  writeFile(dir.path() / "fake.bc", "not bitcode at all");
  auto fake = registry.resolve("file://" + (dir.path() / "fake.bc").string());
  EXPECT_EQ(fake.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(fake.status().message().find("magic"), std::string::npos);

  if (::geteuid() != 0) {  // root reads anything
    writeFile(dir.path() / "secret.bc", sampleBitcode());
    ::chmod((dir.path() / "secret.bc").c_str(), 0);
    EXPECT_EQ(registry.resolve("file://" + (dir.path() / "secret.bc").string()).status().code(),
              ErrorCode::kPermissionDenied);
  }
}

TEST(RegistryTest, OversizedFileIsRefusedBeforeReading) {
  TempDir dir;
  DatasetConfig config;
  config.maxBenchmarkBytes = 1000;
  auto registry = allowing(dir.path(), config);
  auto big = dir.path() / "big.bc";
  writeFile(big, sampleBitcode());  // several KB of real bitcode
  auto result = registry.resolve("file://" + big.string());
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("size limit"), std::string::npos);
  // A sparse 1 TB file would take forever to read: the limit must apply first.
  auto huge = dir.path() / "huge.bc";
  writeFile(huge, "");
  std::filesystem::resize_file(huge, std::uintmax_t{1} << 40);
  EXPECT_EQ(registry.resolve("file://" + huge.string()).status().code(),
            ErrorCode::kInvalidArgument);
  // Embedded benchmarks are held to the same limit.
  EXPECT_EQ(registry.resolve("benchmark://kiln-bench-v0/crc32").status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(RegistryTest, FileUrisAreRefusedWithoutAnAllowedDirectory) {
  TempDir dir;
  writeFile(dir.path() / "prog.bc", sampleBitcode());
  auto registry = makeRegistry();
  auto refused = registry.resolve("file://" + (dir.path() / "prog.bc").string());
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("--allow-files"), std::string::npos);
}

TEST(RegistryTest, FileUrisOutsideTheAllowedDirectoryAreRefusedAlike) {
  TempDir dir;
  writeFile(dir.path() / "allowed" / "prog.bc", sampleBitcode());
  writeFile(dir.path() / "outside" / "prog.bc", sampleBitcode());
  auto registry = allowing(dir.path() / "allowed");
  EXPECT_TRUE(registry.resolve("file://" + (dir.path() / "allowed" / "prog.bc").string()).ok());
  // Existing or not, with a benchmark extension or not: the same refusal.
  for (const char* name : {"prog.bc", "missing.bc", "prog.txt"}) {
    auto refused = registry.resolve("file://" + (dir.path() / "outside" / name).string());
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << name;
  }
  // Symlinks out of the allowed directory, absolute or relative, are refused too.
  std::filesystem::create_symlink(dir.path() / "outside" / "prog.bc",
                                  dir.path() / "allowed" / "absolute.bc");
  std::filesystem::create_symlink("../outside/prog.bc", dir.path() / "allowed" / "relative.bc");
  for (const char* name : {"absolute.bc", "relative.bc"}) {
    auto refused = registry.resolve("file://" + (dir.path() / "allowed" / name).string());
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << name;
  }
}

TEST(RegistryTest, ConcurrentResolvesAgree) {
  auto registry = makeRegistry();
  auto uris = registry.benchmarkUris("benchmark://kiln-bench-v0");
  ASSERT_TRUE(uris.ok());
  std::vector<std::string> expected;
  for (const auto& uri : *uris) expected.push_back(registry.resolve(uri)->bytes);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        std::size_t i = static_cast<std::size_t>(t * 7 + round) % uris->size();
        auto bytes = registry.resolve((*uris)[i]);
        if (!bytes.ok() || bytes->bytes != expected[i]) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(SeedTest, ParsesCanonicalSeeds) {
  EXPECT_EQ(*parseSeed("0"), 0u);
  EXPECT_EQ(*parseSeed("4294967295"), 4294967295u);
  for (const char* bad : {"", "01", "+1", "-1", "1e3", "4294967296", "12345678901", " 1", "0x10"}) {
    EXPECT_EQ(parseSeed(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace kiln::datasets
