// The file access policy, without touching a file: which root a requested
// path falls under, what is refused and how, how --allow-files values are
// read, and the default roots (loopback-only servers allow the current
// directory, anything reachable from elsewhere allows nothing).
#include <kiln/file_access.h>

#include <gtest/gtest.h>

namespace kiln {
namespace {

FileAccess roots(std::vector<std::filesystem::path> paths) { return FileAccess{std::move(paths)}; }

TEST(FileAccessPolicy, APathBelowARootIsAllowedWithItsRelativePart) {
  auto allowed = checkFileRequest(roots({"/data/bench"}), "/data/bench/sub/x.bc");
  ASSERT_TRUE(allowed.ok()) << allowed.status().toString();
  EXPECT_EQ(allowed->root, "/data/bench");
  EXPECT_EQ(allowed->relative, "sub/x.bc");
}

TEST(FileAccessPolicy, DotsAndDoubledSlashesDoNotMatter) {
  auto allowed = checkFileRequest(roots({"/data/bench/"}), "/data//./bench/./x.bc");
  ASSERT_TRUE(allowed.ok()) << allowed.status().toString();
  EXPECT_EQ(allowed->relative, "x.bc");
}

TEST(FileAccessPolicy, TheRootItselfIsAllowedAsDot) {
  auto allowed = checkFileRequest(roots({"/data"}), "/data");
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->relative, ".");
}

TEST(FileAccessPolicy, OutsideEveryRootIsPermissionDeniedNamingTheFlag) {
  auto refused = checkFileRequest(roots({"/data/bench", "/srv/corpus"}), "/etc/shadow");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("--allow-files"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("/etc/shadow"), std::string::npos);
}

TEST(FileAccessPolicy, ANameThatOnlyStartsLikeARootIsOutsideIt) {
  auto refused = checkFileRequest(roots({"/data/bench"}), "/data/benchmarks/x.bc");
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(checkFileRequest(roots({"/data/bench"}), "/data").status().code(),
            ErrorCode::kPermissionDenied);
}

TEST(FileAccessPolicy, NoRootsAllowNothing) {
  auto refused = checkFileRequest(FileAccess{}, "/tmp/x.bc");
  EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("--allow-files"), std::string::npos);
}

TEST(FileAccessPolicy, DotDotIsRefusedWhereverItLeads) {
  for (const char* path :
       {"/data/bench/../../etc/passwd", "/data/bench/sub/../x.bc", "/data/bench/.."}) {
    auto refused = checkFileRequest(roots({"/data/bench"}), path);
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << path;
    EXPECT_NE(refused.status().message().find("'..'"), std::string::npos) << path;
  }
}

TEST(FileAccessPolicy, ARelativePathIsInvalid) {
  auto refused = checkFileRequest(roots({"/data"}), "data/x.bc");
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
}

TEST(FileAccessPolicy, TheOutermostRootIsUsed) {
  auto allowed = checkFileRequest(roots({"/data/bench", "/data"}), "/data/bench/x.bc");
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->root, "/data");
  EXPECT_EQ(allowed->relative, "bench/x.bc");
}

TEST(FileAccessPolicy, TheFileSystemRootAllowsEveryAbsolutePath) {
  auto allowed = checkFileRequest(roots({"/"}), "/etc/hosts");
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->relative, "etc/hosts");
}

TEST(AllowFilesFlag, NoValuesMeansTheDefault) {
  auto parsed = parseAllowFiles({}, "/home/op");
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->has_value());
}

TEST(AllowFilesFlag, NoneMeansNoDirectory) {
  auto parsed = parseAllowFiles({"none"}, "/home/op");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->has_value());
  EXPECT_TRUE((*parsed)->empty());
}

TEST(AllowFilesFlag, NoneBesideADirectoryIsRefused) {
  auto parsed = parseAllowFiles({"none", "/data"}, "/home/op");
  EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("./none"), std::string::npos);
}

TEST(AllowFilesFlag, RelativeDirectoriesAreTakenFromTheCurrentOne) {
  auto parsed = parseAllowFiles({"bench", "/srv/corpus/", "./none", "../shared/x"}, "/home/op");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  std::vector<std::filesystem::path> expected{"/home/op/bench", "/srv/corpus", "/home/op/none",
                                              "/home/shared/x"};
  EXPECT_EQ(**parsed, expected);
}

TEST(AllowFilesFlag, AnEmptyValueIsRefused) {
  EXPECT_EQ(parseAllowFiles({""}, "/home/op").status().code(), ErrorCode::kInvalidArgument);
}

TEST(DefaultFileRoots, LoopbackAndIpcOnlyAllowTheCurrentDirectory) {
  std::vector<std::filesystem::path> current{"/home/op/work"};
  EXPECT_EQ(defaultFileRoots({"tcp://127.0.0.1:0"}, "/home/op/work"), current);
  EXPECT_EQ(defaultFileRoots({"tcp://127.0.0.1:7800", "ipc://@kiln-worker-1"}, "/home/op/work"),
            current);
  EXPECT_EQ(defaultFileRoots({"tcp://localhost:7800", "tcp://[::1]:7801"}, "/home/op/work"),
            current);
  EXPECT_EQ(defaultFileRoots({"inproc://worker"}, "/home/op/work"), current);
}

TEST(DefaultFileRoots, AnyEndpointBeyondLoopbackAllowsNothing) {
  for (const char* endpoint : {"tcp://0.0.0.0:7800", "tcp://*:7800", "tcp://10.0.0.5:7800",
                               "tcp://eth0:7800", "tcp://[::]:7800", "udp://127.0.0.1:1"}) {
    EXPECT_TRUE(defaultFileRoots({"tcp://127.0.0.1:0", endpoint}, "/home/op").empty()) << endpoint;
  }
}

TEST(DefaultFileRoots, TheLogLineSaysWhatIsAllowed) {
  EXPECT_NE(describeFileAccess(FileAccess{}).find("--allow-files"), std::string::npos);
  EXPECT_NE(describeFileAccess(roots({"/a", "/b"})).find("/a, /b"), std::string::npos);
}

}  // namespace
}  // namespace kiln
