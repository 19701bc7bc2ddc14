// `kiln corpus extract`'s library on real builds: a CMake project configured
// by the test (compile_commands.json from CMAKE_EXPORT_COMPILE_COMMANDS) and
// a make project run under `bear`, compiled by the real clang-19 and checked
// by opt-19; and what is skipped, and why, with stand-in compilers that
// misbehave.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "programs/make/corpus_extract.h"
#include "programs/make/llvm_tools.h"
#include "tests/programs/test_util.h"

namespace kiln::programs {
namespace {

using ::testing::HasSubstr;
using testing::readFile;
using testing::runTool;
using testing::TempDir;
using testing::writeFile;

// A CMake project: a library in a subdirectory, C and C++, a definition the
// source needs, and one source that does not compile.
std::filesystem::path writeCMakeProject(const std::filesystem::path& root) {
  writeFile(root / "CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.16)
project(demo C CXX)
add_library(shapes STATIC lib/area.c lib/names.cpp)
add_executable(app main.c broken.c)
target_compile_definitions(app PRIVATE ANSWER=42)
target_link_libraries(app shapes)
)");
  writeFile(
      root / "lib/area.c",
      "int area(int w, int h) { int a = 0; for (int i = 0; i < h; ++i) a += w; return a; }\n");
  writeFile(root / "lib/names.cpp",
            "#include <string>\nstd::string name(int i) { return i ? \"one\" : \"zero\"; }\n");
  writeFile(root / "main.c",
            "#ifndef ANSWER\n#error ANSWER is not defined\n#endif\nint area(int, int);\n"
            "int main(void) { return area(ANSWER, 2) == 84 ? 0 : 1; }\n");
  writeFile(root / "broken.c", "int broken(void) { return undeclared_name; }\n");
  return root;
}

ExtractOptions optionsFor(const std::filesystem::path& commands, const std::filesystem::path& out) {
  ExtractOptions options;
  options.compileCommands = commands;
  options.output = out;
  options.jobs = 2;
  return options;
}

const SkippedSource* findSkip(const ExtractReport& report, std::string_view fileName) {
  for (const SkippedSource& skip : report.skipped) {
    if (std::filesystem::path(skip.source).filename() == fileName) return &skip;
  }
  return nullptr;
}

TEST(CorpusExtractTest, ACMakeBuildBecomesAnMlCompilerOptCorpus) {
  TempDir dir;
  auto source = writeCMakeProject(dir.path() / "src");
  auto build = dir.path() / "build";
  ASSERT_TRUE(runTool({"cmake", "-S", source.string(), "-B", build.string(),
                       "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", "-DCMAKE_BUILD_TYPE=Release"}));

  auto options = optionsFor(build / "compile_commands.json", dir.path() / "corpus");
  std::vector<ExtractProgress> progress;
  options.onProgress = [&](const ExtractProgress& p) { progress.push_back(p); };
  auto report = extractCorpus(options);
  ASSERT_TRUE(report.ok()) << report.status().toString();

  std::set<std::string> modules;
  for (const auto& m : report->extracted) modules.insert(m.module);
  EXPECT_EQ(modules, (std::set<std::string>{"lib/area", "lib/names", "main"}));
  EXPECT_EQ(report->sourceRoot, source);
  EXPECT_EQ(report->corpusModules, 3u);
  ASSERT_EQ(report->skipped.size(), 1u);
  EXPECT_EQ(report->skipped[0].reason, "compile error");
  EXPECT_THAT(report->skipped[0].detail, HasSubstr("undeclared_name"));
  EXPECT_THAT(report->skipped[0].detail, HasSubstr("error:"));

  ASSERT_EQ(progress.size(), 4u);
  EXPECT_EQ(progress.back().done, 4u);
  EXPECT_EQ(progress.back().total, 4u);
  EXPECT_EQ(progress.back().extracted, 3u);
  EXPECT_EQ(progress.back().skipped, 1u);

  auto corpus = dir.path() / "corpus";
  auto described = parseCorpusDescription(readFile(corpus / "corpus_description.json"));
  ASSERT_TRUE(described.ok()) << described.status().toString();
  EXPECT_EQ(std::set<std::string>(described->begin(), described->end()), modules);
  for (const std::string& module : modules) {
    std::string bitcode = readFile(corpus / (module + ".bc"));
    EXPECT_TRUE(hasBitcodeMagic(bitcode)) << module;
    EXPECT_TRUE(verifyModule(corpus / (module + ".bc"), "opt-19", {}).ok()) << module;
    EXPECT_FALSE(std::filesystem::exists(corpus / (module + ".bc.partial")));
    // The .cmd holds the build's code-generation flags: Release's -O3, no -D.
    std::string cmd = readFile(corpus / (module + ".cmd"));
    EXPECT_THAT(cmd, HasSubstr("-O3")) << module;
    EXPECT_THAT(cmd, ::testing::Not(HasSubstr("-DNDEBUG"))) << module;
    // ... with which the module's bitcode builds again, as ml-compiler-opt does.
    std::vector<std::string> rebuild{"clang-19"};
    std::size_t start = 0;
    while (start < cmd.size()) {
      std::size_t end = std::min(cmd.find('\0', start), cmd.size());
      rebuild.push_back(cmd.substr(start, end - start));
      start = end + 1;
    }
    rebuild.insert(rebuild.end(), {"-c", "-x", "ir", (corpus / (module + ".bc")).string(), "-o",
                                   (dir.path() / "rebuilt.o").string()});
    EXPECT_TRUE(runTool(rebuild)) << module;
  }
  EXPECT_FALSE(std::filesystem::exists(corpus / "broken.bc"));
  EXPECT_FALSE(std::filesystem::exists(corpus / "broken.bc.partial"));

  // The report names every compile's outcome.
  std::string json = reportJson(*report);
  EXPECT_THAT(json, HasSubstr("\"extracted\": 3"));
  EXPECT_THAT(json, HasSubstr("\"compile error\": 1"));
  EXPECT_THAT(json, HasSubstr("\"module\": \"lib/area\", \"outcome\": \"extracted\""));
  EXPECT_THAT(json, HasSubstr("\"module\": \"broken\", \"outcome\": \"skipped\""));

  // Extracting into the same directory again needs --append.
  auto again = extractCorpus(options);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("--append"));
}

TEST(CorpusExtractTest, AMakeBuildUnderBearAppendsWithAPrefixAndKeepsTheFirstOfTwoCompiles) {
  TempDir dir;
  auto project = dir.path() / "mk";
  // As libtool does: each source compiled with -fPIC for the shared library, then without.
  writeFile(project / "Makefile",
            "all: pic/crc.o crc.o pic/sum.o sum.o\n"
            "pic/%.o: %.c\n\tmkdir -p pic && $(CC) -O2 -fconserve-stack -fPIC -DPIC -c $< -o $@\n"
            "%.o: %.c\n\t$(CC) -O2 -c $< -o $@\n");
  writeFile(project / "crc.c",
            "unsigned crc(const unsigned char* p, int n) { unsigned c = ~0u;\n"
            "  for (int i = 0; i < n; ++i) { c ^= p[i]; for (int k = 0; k < 8; ++k)\n"
            "    c = (c >> 1) ^ (0xEDB88320u & -(c & 1)); } return ~c; }\n");
  writeFile(project / "sum.c",
            "int sum(const int* v, int n) { int s = 0; while (n--) s += *v++; "
            "return s; }\n");
  auto commands = dir.path() / "compile_commands.json";
  ASSERT_TRUE(
      runTool({"bear", "--output", commands.string(), "--", "make", "-C", project.string()}));

  auto corpus = dir.path() / "corpus";
  writeFile(corpus / "corpus_description.json",
            "{\"has_thinlto\": false, \"modules\": [\"other/kept\"]}");
  auto options = optionsFor(commands, corpus);
  options.prefix = "mk";
  options.append = true;
  auto report = extractCorpus(options);
  ASSERT_TRUE(report.ok()) << report.status().toString();
  ASSERT_EQ(report->extracted.size(), 2u);
  EXPECT_EQ(report->extracted[0].module, "mk/crc");
  EXPECT_EQ(report->extracted[1].module, "mk/sum");
  EXPECT_EQ(report->corpusModules, 3u);
  ASSERT_EQ(report->skipped.size(), 2u);
  for (const SkippedSource& skip : report->skipped) EXPECT_EQ(skip.reason, "compiled twice");
  // GCC's own flags, which clang-19 does not know, are left out of the compile and the .cmd.
  EXPECT_EQ(report->extracted[0].droppedFlags, (std::vector<std::string>{"-fconserve-stack"}));
  EXPECT_THAT(readFile(corpus / "mk/crc.cmd"), ::testing::Not(HasSubstr("conserve")));
  EXPECT_THAT(reportJson(*report), HasSubstr("\"dropped_flags\": [\"-fconserve-stack\"]"));
  // The first compile (the -fPIC one) is the module.
  EXPECT_THAT(readFile(corpus / "mk/crc.cmd"), HasSubstr("-fPIC"));
  auto described = parseCorpusDescription(readFile(corpus / "corpus_description.json"));
  ASSERT_TRUE(described.ok()) << described.status().toString();
  EXPECT_EQ(*described, (std::vector<std::string>{"other/kept", "mk/crc", "mk/sum"}));

  // Appending the same build again adds nothing: its modules are in the corpus.
  auto again = extractCorpus(options);
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_EQ(again->extracted.size(), 0u);
  EXPECT_NE(findSkip(*again, "crc.c"), nullptr);
  EXPECT_EQ(findSkip(*again, "crc.c")->reason, "already in the corpus");
  EXPECT_EQ(again->corpusModules, 3u);
}

// A one-source compile database for the stand-in compilers below.
std::filesystem::path oneSourceDatabase(const std::filesystem::path& dir) {
  writeFile(dir / "src/one.c", "int one(void) { return 1; }\n");
  writeFile(dir / "compile_commands.json",
            "[{\"directory\": \"" + (dir / "src").string() +
                "\", \"arguments\": [\"cc\", \"-O2\", \"-c\", \"one.c\"], \"file\": \"one.c\"}]");
  return dir / "compile_commands.json";
}

SkippedSource onlySkip(const ExtractOptions& options) {
  auto report = extractCorpus(options);
  EXPECT_TRUE(report.ok()) << report.status().toString();
  if (!report.ok() || report->skipped.size() != 1) {
    ADD_FAILURE() << "expected one skipped module";
    return {};
  }
  EXPECT_TRUE(report->extracted.empty());
  EXPECT_FALSE(std::filesystem::exists(options.output / "one.bc"));
  EXPECT_FALSE(std::filesystem::exists(options.output / "one.bc.partial"));
  return report->skipped[0];
}

TEST(CorpusExtractTest, ModulesLlvmWouldNotAcceptNeverEnterTheCorpus) {
  TempDir dir;
  auto commands = oneSourceDatabase(dir.path());
  // A "compiler" whose output has bitcode's magic and nothing LLVM can read.
  writeFile(dir.path() / "bad-clang",
            "#!/bin/sh\nfor a; do out=$a; done\n"
            "printf 'BC\\300\\336garbage' > \"$out\"\n",
            true);
  auto options = optionsFor(commands, dir.path() / "c1");
  options.clang = (dir.path() / "bad-clang").string();
  SkippedSource rejected = onlySkip(options);
  EXPECT_EQ(rejected.reason, "rejected by the LLVM 19 verifier");
  EXPECT_THAT(rejected.detail, HasSubstr("opt-19"));

  // Without the read-back, a compiler other than LLVM 19's clang is trusted: that is the choice.
  options.output = dir.path() / "c1-trusted";
  options.readBack = false;
  auto trusted = extractCorpus(options);
  ASSERT_TRUE(trusted.ok()) << trusted.status().toString();
  EXPECT_EQ(trusted->extracted.size(), 1u);
  options.readBack = true;

  writeFile(dir.path() / "text-clang", "#!/bin/sh\nfor a; do out=$a; done\necho hi > \"$out\"\n",
            true);
  options.output = dir.path() / "c2";
  options.clang = (dir.path() / "text-clang").string();
  EXPECT_EQ(onlySkip(options).reason, "output is not bitcode");

  writeFile(dir.path() / "slow-clang", "#!/bin/sh\nexec sleep 30\n", true);
  options.output = dir.path() / "c3";
  options.clang = (dir.path() / "slow-clang").string();
  options.timeoutPerModule = std::chrono::milliseconds(300);
  EXPECT_EQ(onlySkip(options).reason, "compile timed out");

  writeFile(dir.path() / "crashing-clang", "#!/bin/sh\nkill -SEGV $$\n", true);
  options.output = dir.path() / "c4";
  options.clang = (dir.path() / "crashing-clang").string();
  options.timeoutPerModule = std::chrono::seconds(30);
  SkippedSource crashed = onlySkip(options);
  EXPECT_EQ(crashed.reason, "compiler crashed");
  EXPECT_THAT(crashed.detail, HasSubstr("SIGSEGV"));

  options.output = dir.path() / "c5";
  options.clang = "clang-19";
  options.maxModuleBytes = 64;
  SkippedSource big = onlySkip(options);
  EXPECT_EQ(big.reason, "module over the size limit");
  EXPECT_THAT(big.detail, HasSubstr("over the limit of 64"));
}

TEST(CorpusExtractTest, WhatCannotBeUsedAtAllIsAnError) {
  TempDir dir;
  auto commands = oneSourceDatabase(dir.path());
  auto options = optionsFor(commands, dir.path() / "corpus");
  options.clang = "no-such-clang-kiln-test";
  auto missing = extractCorpus(options);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound) << missing.status().toString();

  // An entry whose directory is gone is skipped; the others go on.
  writeFile(dir.path() / "gone.json",
            "[{\"directory\": \"" + (dir.path() / "gone").string() +
                "\", \"arguments\": [\"cc\", \"-c\", \"/x/a.c\"], \"file\": \"/x/a.c\"}]");
  options = optionsFor(dir.path() / "gone.json", dir.path() / "gone-corpus");
  auto gone = extractCorpus(options);
  ASSERT_TRUE(gone.ok()) << gone.status().toString();
  ASSERT_EQ(gone->skipped.size(), 1u);
  EXPECT_THAT(gone->skipped[0].detail, HasSubstr("does not exist"));

  options = optionsFor(dir.path() / "nothing.json", dir.path() / "corpus");
  EXPECT_EQ(extractCorpus(options).status().code(), ErrorCode::kNotFound);

  writeFile(dir.path() / "bad.json", "[{\"directory\": ");
  options = optionsFor(dir.path() / "bad.json", dir.path() / "corpus");
  EXPECT_THAT(extractCorpus(options).status().message(), HasSubstr("not valid JSON"));

  writeFile(dir.path() / "empty.json", "[]");
  options = optionsFor(dir.path() / "empty.json", dir.path() / "corpus");
  EXPECT_THAT(extractCorpus(options).status().message(), HasSubstr("no compile commands"));

  writeFile(dir.path() / "corrupt/corpus_description.json", "{\"modules\": 7}");
  options = optionsFor(commands, dir.path() / "corrupt");
  options.append = true;
  EXPECT_THAT(extractCorpus(options).status().message(), HasSubstr("no \"modules\" list"));

  options = optionsFor(commands, dir.path() / "corpus");
  options.prefix = "../up";
  EXPECT_THAT(extractCorpus(options).status().message(), HasSubstr("--prefix"));
}

}  // namespace
}  // namespace kiln::programs
