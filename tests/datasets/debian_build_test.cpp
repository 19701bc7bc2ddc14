// The offline mechanism of `kiln datasets install`: a project's build run
// under bear in a scratch copy (recording clang's compiles, or failing with
// its log's tail, or killed at its time limit), the system's apt sources read
// from a configuration directory, and the install's refusals of bad input
// (an unknown dataset, a cache that cannot be written) before any network.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "programs/datasets/debian/dataset_install.h"
#include "programs/datasets/debian/project_build.h"
#include "programs/datasets/debian/source_fetch.h"
#include "tests/support/scratch_dir.h"

namespace kiln::debian {
namespace {

namespace fs = std::filesystem;

// Its files, removed at the end.
class ProjectDir : public testsupport::ScratchDir {
 public:
  ProjectDir() : ScratchDir("kiln-debian") {}
};

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A two-file C project with a plain Makefile that hard-codes gcc, as bzip2's does.
fs::path smallProject(const fs::path& root, const std::string& extraRule = "") {
  fs::path source = root / "source";
  writeFile(source / "src/a.c", "int twice(int x) { return 2 * x; }\n");
  fs::last_write_time(source / "src/a.c",
                      fs::last_write_time(source / "src/a.c") - std::chrono::hours(24));
  writeFile(source / "src/b.c", "int twice(int);\nint main(void) { return twice(0); }\n");
  writeFile(source / "src/Makefile", "CC=gcc\nprog: a.o b.o\n\t$(CC) -o prog a.o b.o\n" +
                                         std::string("%.o: %.c\n\t$(CC) -O2 -c $< -o $@\n") +
                                         extraRule);
  return source;
}

Recipe makeRecipe(std::vector<std::string> makeArguments = {}) {
  return {"tiny", "tiny",          "src", BuildSystem::kMake, {}, std::move(makeArguments),
          true,   "a test project"};
}

TEST(DebianBuildTest, RecordsClangCompilesInAScratchCopy) {
  ProjectDir dir;
  fs::path source = smallProject(dir.path());
  fs::path log = dir.path() / "logs/tiny.log";
  auto built = buildProject(makeRecipe(), source, dir.path() / "scratch", log, Toolchain{}, 2,
                            BuildLimits{});
  ASSERT_TRUE(built.ok()) << built.status().toString();
  EXPECT_EQ(built->directory, dir.path() / "scratch/src");
  std::string commands = readFile(built->compileCommands);
  EXPECT_NE(commands.find("a.c"), std::string::npos) << commands;
  EXPECT_NE(commands.find("b.c"), std::string::npos) << commands;
  EXPECT_NE(commands.find("clang-19"), std::string::npos) << commands;  // not the Makefile's gcc
  EXPECT_FALSE(fs::exists(source / "src/a.o"));  // the cached tree is left as it was
  // Times are kept: a copy that touched every file would make generated files look stale.
  EXPECT_EQ(fs::last_write_time(dir.path() / "scratch/src/a.c"),
            fs::last_write_time(source / "src/a.c"));
  EXPECT_NE(readFile(log).find("+ env CC=clang-19"), std::string::npos);
}

TEST(DebianBuildTest, AFailingBuildReportsItsStepAndLogTail) {
  ProjectDir dir;
  fs::path source = smallProject(dir.path(), "broken:\n\t@echo the-reason-it-broke; exit 3\n");
  auto built = buildProject(makeRecipe({"broken"}), source, dir.path() / "scratch",
                            dir.path() / "tiny.log", Toolchain{}, 1, BuildLimits{});
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(built.status().message().find("tiny's make exited with code"), std::string::npos)
      << built.status().message();
  EXPECT_NE(built.status().message().find("the-reason-it-broke"), std::string::npos)
      << built.status().message();
}

TEST(DebianBuildTest, ABuildThatCompilesNothingIsAnError) {
  ProjectDir dir;
  fs::path source = smallProject(dir.path(), "nothing:\n\t@true\n");
  auto built = buildProject(makeRecipe({"nothing"}), source, dir.path() / "scratch",
                            dir.path() / "tiny.log", Toolchain{}, 1, BuildLimits{});
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("no compile"), std::string::npos)
      << built.status().message();
}

TEST(DebianBuildTest, AStepPastItsTimeLimitIsKilled) {
  ProjectDir dir;
  fs::path source = smallProject(dir.path(), "slow:\n\tsleep 60\n");
  BuildLimits limits;
  limits.perStep = std::chrono::seconds(1);
  auto started = std::chrono::steady_clock::now();
  auto built = buildProject(makeRecipe({"slow"}), source, dir.path() / "scratch",
                            dir.path() / "tiny.log", Toolchain{}, 1, limits);
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), ErrorCode::kTimeout) << built.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(50));
}

TEST(DebianBuildTest, ARecipeDirectoryTheSourceLacksIsNamed) {
  ProjectDir dir;
  fs::path source = smallProject(dir.path());
  Recipe recipe = makeRecipe();
  recipe.directory = "no-such-dir";
  auto built = buildProject(recipe, source, dir.path() / "scratch", dir.path() / "tiny.log",
                            Toolchain{}, 1, BuildLimits{});
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("no-such-dir"), std::string::npos);
}

TEST(DebianFetchTest, SystemSourcesAreReadFromBothFormsAndOtherFilesIgnored) {
  ProjectDir apt;
  writeFile(apt.path() / "sources.list", "deb http://archive.example/debian bookworm main\n");
  writeFile(apt.path() / "sources.list.d/debian.sources",
            "Types: deb\nURIs: http://archive.example/debian-security\n"
            "Suites: bookworm-security\nComponents: main\n");
  writeFile(apt.path() / "sources.list.d/other.list.disabled", "deb http://off.example x main\n");
  auto list = systemDebSrcList(apt.path());
  ASSERT_TRUE(list.ok()) << list.status().toString();
  EXPECT_EQ(*list,
            "deb-src http://archive.example/debian bookworm main\n"
            "deb-src http://archive.example/debian-security bookworm-security main\n");

  ProjectDir empty;
  auto none = systemDebSrcList(empty.path());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);

  writeFile(empty.path() / "sources.list.d/bad.list", "deb http://x\n");
  auto bad = systemDebSrcList(empty.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.list"), std::string::npos);
}

TEST(DebianInstallTest, UnknownDatasetIsRefusedNamingTheKnownOnes) {
  ProjectDir dir;
  InstallOptions options;
  options.dataset = "debian-v9";
  options.cacheDirectory = dir.path() / "cache";
  options.root = dir.path() / "root";
  auto report = installDataset(options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("debian-mini"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "root"));
}

TEST(DebianInstallTest, ACacheThatCannotBeCreatedIsRefused) {
  ProjectDir dir;
  writeFile(dir.path() / "a-file", "not a directory\n");
  InstallOptions options;
  options.dataset = "debian-mini";
  options.cacheDirectory = dir.path() / "a-file" / "cache";  // even root cannot make this
  options.root = dir.path() / "root";
  auto report = installDataset(options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(report.status().message().find("--cache-dir"), std::string::npos);
}

TEST(DebianInstallTest, ARootDirectoryHoldingSomethingElseIsLeftAlone) {
  ProjectDir dir;
  writeFile(dir.path() / "root/debian-mini/notes.txt", "someone's files\n");
  InstallOptions options;
  options.dataset = "debian-mini";
  options.cacheDirectory = dir.path() / "cache";
  options.root = dir.path() / "root";
  auto report = installDataset(options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("--root"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.path() / "root/debian-mini/notes.txt"));
}

TEST(DebianFetchTest, ANameThatIsNoPackageIsRefusedBeforeApt) {
  ProjectDir dir;
  auto fetcher = SourceFetcher::create({dir.path(), dir.path() / "no-apt"});
  ASSERT_TRUE(fetcher.ok()) << fetcher.status().toString();
  for (const char* name : {"../etc", "Zlib", "a", "x;rm -rf /"}) {
    auto fetched = fetcher->fetch(name, true);
    ASSERT_FALSE(fetched.ok()) << name;
    EXPECT_EQ(fetched.status().code(), ErrorCode::kInvalidArgument) << name;
  }
}

}  // namespace
}  // namespace kiln::debian
