// Reading below a root on real directories, with the kernel's openat2 and
// with the portable walk used where the kernel lacks it: files inside are
// read, '..' and symlinks that lead out (absolute or relative, to files or
// directories) are refused the same way whether their target exists, links
// that stay inside are followed, and only regular files within the size
// bound are read.
#include "common/security/file_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "common/process/working_directory.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

class FileReaderTest : public ::testing::TestWithParam<BeneathResolver> {
 protected:
  void SetUp() override {
    auto base = WorkingDirectory::create({}, "kiln-file-reader-test");
    ASSERT_TRUE(base.ok()) << base.status().toString();
    base_.emplace(std::move(base).value());
    root_ = base_->path() / "root";
    outside_ = base_->path() / "outside";
    fs::create_directories(root_ / "sub");
    fs::create_directories(outside_);
    write(root_ / "inside.ll", "inside");
    write(root_ / "sub" / "deep.ll", "deep");
    write(outside_ / "secret.ll", "secret");
  }

  static void write(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  Result<std::string> read(const fs::path& relative, std::uint64_t maxBytes = 1 << 20) {
    return readFileBeneath(root_, relative, maxBytes, GetParam());
  }
  Result<std::string> readAllowed(const fs::path& path) {
    return readAllowedFile(FileAccess{{root_}}, path, 1 << 20, GetParam());
  }

  std::optional<WorkingDirectory> base_;
  fs::path root_, outside_;
};

TEST_P(FileReaderTest, ReadsAFileInside) {
  auto bytes = read("inside.ll");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  EXPECT_EQ(*bytes, "inside");
  auto deep = readAllowed(root_ / "sub" / "deep.ll");
  ASSERT_TRUE(deep.ok()) << deep.status().toString();
  EXPECT_EQ(*deep, "deep");
}

TEST_P(FileReaderTest, AMissingFileInsideIsNotFound) {
  EXPECT_EQ(read("missing.ll").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(read("inside.ll/below").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(readAllowed(root_ / "nothing" / "here.ll").status().code(), ErrorCode::kNotFound);
}

TEST_P(FileReaderTest, DotDotOutOfTheRootIsRefused) {
  auto refused = read("../outside/secret.ll");
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("--allow-files"), std::string::npos);
  EXPECT_EQ(read("sub/../../outside/secret.ll").status().code(), ErrorCode::kPermissionDenied);
  // Through the policy, '..' is refused before anything is opened.
  EXPECT_EQ(readAllowed(root_ / ".." / "outside" / "secret.ll").status().code(),
            ErrorCode::kPermissionDenied);
}

TEST_P(FileReaderTest, DotDotThatStaysInsideIsResolved) {
  auto bytes = read("sub/../inside.ll");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  EXPECT_EQ(*bytes, "inside");
}

TEST_P(FileReaderTest, AnAbsoluteSymlinkOutIsRefused) {
  fs::create_symlink(outside_ / "secret.ll", root_ / "absolute.ll");
  auto refused = read("absolute.ll");
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().toString();
  EXPECT_EQ(readAllowed(root_ / "absolute.ll").status().code(), ErrorCode::kPermissionDenied);
}

TEST_P(FileReaderTest, ARelativeSymlinkOutIsRefused) {
  fs::create_symlink("../outside/secret.ll", root_ / "relative.ll");
  fs::create_symlink("../../outside/secret.ll", root_ / "sub" / "deeper.ll");
  EXPECT_EQ(read("relative.ll").status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(read("sub/deeper.ll").status().code(), ErrorCode::kPermissionDenied);
}

TEST_P(FileReaderTest, ASymlinkedDirectoryOutIsRefused) {
  fs::create_directory_symlink("../outside", root_ / "elsewhere");
  fs::create_directory_symlink(outside_, root_ / "elsewhere-absolute");
  EXPECT_EQ(read("elsewhere/secret.ll").status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(read("elsewhere-absolute/secret.ll").status().code(), ErrorCode::kPermissionDenied);
}

TEST_P(FileReaderTest, ARefusalSaysNothingOfWhetherTheTargetExists) {
  fs::create_symlink("../outside/secret.ll", root_ / "to-existing.ll");
  fs::create_symlink("../outside/no-such.ll", root_ / "to-missing.ll");
  auto existing = read("to-existing.ll");
  auto missing = read("to-missing.ll");
  EXPECT_EQ(existing.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(missing.status().code(), ErrorCode::kPermissionDenied);
  // And a path outside every root is refused before anything is looked at.
  auto outsideExisting = readAllowed(outside_ / "secret.ll");
  auto outsideMissing = readAllowed(outside_ / "no-such.ll");
  EXPECT_EQ(outsideExisting.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(outsideMissing.status().code(), ErrorCode::kPermissionDenied);
  auto withoutName = [](std::string message, const std::string& name) {
    return message.replace(message.find(name), name.size(), "X");
  };
  EXPECT_EQ(withoutName(outsideExisting.status().message(), "secret.ll"),
            withoutName(outsideMissing.status().message(), "no-such.ll"));
}

TEST_P(FileReaderTest, SymlinksThatStayInsideAreFollowed) {
  fs::create_symlink("../inside.ll", root_ / "sub" / "up.ll");
  fs::create_directory_symlink("sub", root_ / "alias");
  fs::create_symlink("alias/up.ll", root_ / "chain.ll");
  for (const char* path : {"sub/up.ll", "alias/deep.ll", "chain.ll"}) {
    auto bytes = read(path);
    ASSERT_TRUE(bytes.ok()) << path << ": " << bytes.status().toString();
    EXPECT_EQ(*bytes, std::string(path) == "alias/deep.ll" ? "deep" : "inside") << path;
  }
}

TEST_P(FileReaderTest, ASymlinkLoopIsRefused) {
  fs::create_symlink("b.ll", root_ / "a.ll");
  fs::create_symlink("a.ll", root_ / "b.ll");
  EXPECT_EQ(read("a.ll").status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(FileReaderTest, ADirectoryIsNotAFile) {
  EXPECT_EQ(read("sub").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(read(".").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(readAllowed(root_).status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(FileReaderTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ / "pipe.ll").c_str(), 0600), 0);
  auto started = std::chrono::steady_clock::now();
  auto refused = read("pipe.ll");
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("not a regular file"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST_P(FileReaderTest, ADeviceIsRefused) {
  auto refused = readFileBeneath("/dev", "null", 1 << 20, GetParam());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("not a regular file"), std::string::npos);
}

TEST_P(FileReaderTest, AFileOverTheBoundIsRefused) {
  write(root_ / "big.ll", std::string(1001, 'x'));
  auto refused = read("big.ll", 1000);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("1001 bytes"), std::string::npos);
  auto exact = read("big.ll", 1001);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->size(), 1001u);
}

TEST_P(FileReaderTest, AnUnreadableFileInsideIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  fs::permissions(root_ / "inside.ll", fs::perms::none);
  EXPECT_EQ(read("inside.ll").status().code(), ErrorCode::kPermissionDenied);
}

INSTANTIATE_TEST_SUITE_P(Resolvers, FileReaderTest,
                         ::testing::Values(BeneathResolver::kKernel, BeneathResolver::kPortable),
                         [](const ::testing::TestParamInfo<BeneathResolver>& info) {
                           return info.param == BeneathResolver::kKernel ? "Kernel" : "Portable";
                         });

class ResolveFileAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto base = WorkingDirectory::create({}, "kiln-file-access-test");
    ASSERT_TRUE(base.ok()) << base.status().toString();
    base_.emplace(std::move(base).value());
  }
  std::optional<WorkingDirectory> base_;
};

TEST_F(ResolveFileAccessTest, ARootMustBeADirectory) {
  std::vector<fs::path> missing{base_->path() / "missing"};
  auto refused = resolveFileAccess(missing, {"tcp://127.0.0.1:0"});
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--allow-files"), std::string::npos);
}

TEST_F(ResolveFileAccessTest, ARootReachedThroughASymlinkIsAlsoAllowedUnderItsRealPath) {
  fs::create_directory(base_->path() / "real");
  fs::create_directory_symlink(base_->path() / "real", base_->path() / "link");
  std::vector<fs::path> allowed{base_->path() / "link"};
  auto access = resolveFileAccess(allowed, {"tcp://0.0.0.0:7800"});
  ASSERT_TRUE(access.ok()) << access.status().toString();
  ASSERT_EQ(access->roots.size(), 2u);
  EXPECT_EQ(access->roots[0], base_->path() / "link");
  EXPECT_EQ(access->roots[1], fs::canonical(base_->path() / "real"));
}

TEST_F(ResolveFileAccessTest, EachRootIsKeptOnce) {
  fs::create_directory(base_->path() / "a");
  std::vector<fs::path> allowed{base_->path() / "a", base_->path() / "a"};
  auto access = resolveFileAccess(allowed, {"tcp://127.0.0.1:0"});
  ASSERT_TRUE(access.ok());
  EXPECT_EQ(access->roots.size(), fs::canonical(base_->path()) == base_->path() ? 1u : 2u);
}

TEST_F(ResolveFileAccessTest, ExplicitNoneAllowsNothingWhereverItListens) {
  auto access = resolveFileAccess(std::vector<fs::path>{}, {"tcp://127.0.0.1:0"});
  ASSERT_TRUE(access.ok());
  EXPECT_TRUE(access->roots.empty());
}

TEST_F(ResolveFileAccessTest, WithoutTheFlagTheListenersDecide) {
  auto local = resolveFileAccess(std::nullopt, {"tcp://127.0.0.1:0", "ipc://@x"});
  ASSERT_TRUE(local.ok());
  ASSERT_FALSE(local->roots.empty());
  EXPECT_EQ(local->roots[0], fs::current_path().lexically_normal());
  auto exposed = resolveFileAccess(std::nullopt, {"tcp://0.0.0.0:0"});
  ASSERT_TRUE(exposed.ok());
  EXPECT_TRUE(exposed->roots.empty());
}

}  // namespace
}  // namespace kiln
