// `kiln corpus extract` as a user runs it: the summary with the skip reasons
// and an example each, a line per compile when stderr is no terminal, the
// --report file, and the errors that stop it (exit code 1, the reason).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/programs/test_util.h"

namespace kiln::programs {
namespace {

using ::testing::HasSubstr;
using testing::readFile;
using testing::TempDir;
using testing::writeFile;

Result<ProcessOutput> kiln(const std::vector<std::string>& args) {
  std::vector<std::string> argv{KILN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return runSubprocess(argv, std::chrono::minutes(2));
}

TEST(CorpusCliTest, ExtractsReportsAndRefuses) {
  TempDir dir;
  auto src = dir.path() / "src";
  writeFile(src / "good.c", "int good(void) { return 1; }\n");
  writeFile(src / "bad.c", "int bad(void) { return nothing_here; }\n");
  writeFile(src / "start.S", "nop\n");
  std::string entries;
  for (const char* file : {"good.c", "bad.c", "start.S"}) {
    entries += std::string(entries.empty() ? "" : ",") + "{\"directory\": \"" + src.string() +
               "\", \"command\": \"cc -O2 -c " + file + "\", \"file\": \"" + file + "\"}";
  }
  writeFile(dir.path() / "build/compile_commands.json", "[" + entries + "]");
  auto corpus = (dir.path() / "corpus").string();
  auto report = (dir.path() / "report.json").string();

  // The build directory is enough: compile_commands.json is found in it.
  auto ran = kiln({"corpus", "extract", (dir.path() / "build").string(), "-o", corpus, "--report",
                   report, "--jobs", "2"});
  ASSERT_TRUE(ran.ok()) << ran.status().toString();
  EXPECT_TRUE(ran->status.success()) << ran->stderrText;
  EXPECT_THAT(ran->stdoutText, HasSubstr("1 module extracted, 2 skipped, 1 module in the corpus"));
  EXPECT_THAT(ran->stdoutText, HasSubstr("skipped     1  compile error"));
  EXPECT_THAT(ran->stdoutText, HasSubstr("nothing_here"));
  EXPECT_THAT(ran->stdoutText, HasSubstr("skipped     1  not one C/C++ compile"));
  EXPECT_THAT(ran->stderrText, HasSubstr("[3/3] "));
  EXPECT_THAT(readFile(report), HasSubstr("\"module\": \"good\", \"outcome\": \"extracted\""));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "corpus/good.bc"));

  auto again = kiln({"corpus", "extract", (dir.path() / "build").string(), "-o", corpus});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status.exitCode, 1);
  EXPECT_THAT(again->stderrText, HasSubstr("--append"));

  auto missing = kiln({"corpus", "extract", (dir.path() / "nowhere").string(), "-o", corpus});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status.exitCode, 1);
  EXPECT_THAT(missing->stderrText, HasSubstr("not found"));

  auto noOutput = kiln({"corpus", "extract", (dir.path() / "build").string()});
  ASSERT_TRUE(noOutput.ok());
  EXPECT_NE(noOutput->status.exitCode, 0);
  EXPECT_THAT(noOutput->stderrText, HasSubstr("--output"));
}

TEST(DatasetsInstallCliTest, ListsRefusesAndLeavesAnInstalledDatasetAlone) {
  TempDir dir;
  auto listed = kiln({"datasets", "install", "--list"});
  ASSERT_TRUE(listed.ok()) << listed.status().toString();
  EXPECT_TRUE(listed->status.success()) << listed->stderrText;
  EXPECT_THAT(listed->stdoutText, HasSubstr("debian-v0"));
  EXPECT_THAT(listed->stdoutText, HasSubstr("findutils"));

  auto unnamed = kiln({"datasets", "install"});
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(unnamed->status.exitCode, 2);
  EXPECT_THAT(unnamed->stderrText, HasSubstr("name a dataset"));

  auto unknown = kiln({"datasets", "install", "debian-v9", "--cache-dir",
                       (dir.path() / "cache").string(), "--root", (dir.path() / "root").string()});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status.exitCode, 1);
  EXPECT_THAT(unknown->stderrText, HasSubstr("debian-v9"));
  EXPECT_THAT(unknown->stderrText, HasSubstr("debian-mini"));

  // Installed once (its record written): nothing is fetched or built again.
  writeFile(dir.path() / "root/debian-mini/kiln-install.json", "{}\n");
  auto again = kiln({"datasets", "install", "debian-mini", "--cache-dir",
                     (dir.path() / "cache").string(), "--root", (dir.path() / "root").string()});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->status.success()) << again->stderrText;
  EXPECT_THAT(again->stdoutText, HasSubstr("already installed"));
}

}  // namespace
}  // namespace kiln::programs
