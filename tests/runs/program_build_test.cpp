// The Runtime linker reads a client's object (issue 48): an object's
// dependent libraries (.deplibs, from the module's !llvm.dependent-libraries)
// made lld open any file the worker could read and echo its lines. The
// module policy refuses that metadata; the linker also runs confined, so a
// file an object names outside the build directory is never read.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "programs/runs/program_build.h"

namespace kiln::runs {
namespace {

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/kiln-link-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::filesystem::path path;
};

// llc-19's object of `ir` (the module policy is not in the way here).
std::string objectOf(const TempDir& dir, const std::string& ir) {
  std::ofstream(dir.path / "m.ll") << ir;
  auto ran = runSubprocess(
      {"llc-19", "-filetype=obj", "-o", (dir.path / "m.o").string(), (dir.path / "m.ll").string()},
      std::chrono::seconds(60));
  EXPECT_TRUE(ran.ok() && ran->status.success());
  std::ifstream in(dir.path / "m.o", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ProgramBuildTest, TheLinkerCannotReadAHostFileAnObjectNames) {
  if (FileConfinement::kernelAbi() == 0) GTEST_SKIP() << "this kernel has no Landlock";
  if (!runSubprocess({"ld.lld", "--version"}, std::chrono::seconds(10)).ok()) {
    GTEST_SKIP() << "no ld.lld: only lld reads an object's dependent libraries";
  }
  TempDir outside, tools, build, objects;
  const std::string secret = "kiln_secret_line_3d0c never read by a linker";
  std::ofstream(outside.path / "secret.txt") << secret << "\n";
  // The operator's driver, as --runtime-linker may name one: clang with lld.
  const std::filesystem::path driver = tools.path / "clang-lld";
  std::ofstream(driver) << "#!/bin/sh\nexec clang-19 -fuse-ld=lld \"$@\"\n";
  std::filesystem::permissions(driver, std::filesystem::perms::owner_all);
  LinkSettings settings;
  settings.driver = driver.string();
  const std::string main =
      "target triple = \"x86_64-unknown-linux-gnu\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  const std::string named =
      objectOf(objects, main + "!llvm.dependent-libraries = !{!0}\n!0 = !{!\"" +
                            (outside.path / "secret.txt").string() + "\"}\n");
  auto linked = linkProgram(named, RunSpec{}, false, build.path, "hostile", settings);
  ASSERT_FALSE(linked.ok()) << "lld linked a library it could not have read";
  EXPECT_EQ(linked.status().message().find(secret), std::string::npos)
      << linked.status().toString();
  // An ordinary object links under the same confinement, with lld or the
  // default driver, with ASan's runtime and the spec's libraries too.
  const std::string object = objectOf(objects, main);
  auto plain = linkProgram(object, RunSpec{}, false, build.path, "plain", settings);
  EXPECT_TRUE(plain.ok()) << plain.status().toString();
  RunSpec withLibm;
  withLibm.libraries = {"m"};
  auto asan = linkProgram(object, withLibm, true, build.path, "asan", LinkSettings{});
  EXPECT_TRUE(asan.ok()) << asan.status().toString();
  if (asan.ok()) {
    auto ran = runSubprocess({asan->executable.string()}, std::chrono::seconds(30));
    EXPECT_TRUE(ran.ok() && ran->status.success());
  }
}

}  // namespace
}  // namespace kiln::runs
