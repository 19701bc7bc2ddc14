// The corpus layout kiln writes and which compile of a build becomes which
// module: names, the description's text and its reading back for --append,
// compile_commands.json parsing, diagnostics trimming. No processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "programs/make/compile_database.h"
#include "programs/make/corpus_layout.h"
#include "programs/make/json_tree.h"
#include "programs/make/llvm_tools.h"

namespace kiln::programs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CorpusLayoutTest, CommonSourceRootIsTheDeepestSharedDirectory) {
  EXPECT_EQ(commonSourceRoot({"/p/src/a.c", "/p/src/lib/b.c", "/p/tools/c.c"}), "/p");
  EXPECT_EQ(commonSourceRoot({"/p/src/a.c"}), "/p/src");
  EXPECT_EQ(commonSourceRoot({"/p/src/a.c", "/q/b.c"}), "/");
  EXPECT_EQ(commonSourceRoot({"/p/src/./x/../a.c", "/p/src/b.c"}), "/p/src");
  EXPECT_EQ(commonSourceRoot({}), "");
}

TEST(CorpusLayoutTest, ModuleNamesAreRelativePathsWithoutExtension) {
  EXPECT_EQ(*moduleNameFor("/p/src/lib/a.c", "/p", ""), "src/lib/a");
  EXPECT_EQ(*moduleNameFor("/p/src/lib/a.c", "/p/src", "zlib"), "zlib/lib/a");
  EXPECT_EQ(*moduleNameFor("/p/a.tar.c", "/p", ""), "a.tar");
  EXPECT_THAT(moduleNameFor("/q/a.c", "/p", "").status().message(), HasSubstr("not below"));
  EXPECT_THAT(moduleNameFor("/p/my file.c", "/p", "").status().message(), HasSubstr("space"));
  EXPECT_THAT(moduleNameFor("/p/50%.c", "/p", "").status().message(), HasSubstr("'%'"));
  EXPECT_FALSE(moduleNameFor("/p/a.c", "/p", "../x").ok());
  EXPECT_FALSE(checkModuleName("a//b").ok());
  EXPECT_FALSE(checkModuleName("").ok());
  EXPECT_FALSE(checkModuleName("caf\xc3\xa9").ok());
  EXPECT_TRUE(checkModuleName("zlib/contrib/minizip/unzip").ok());
}

TEST(CorpusLayoutTest, DescriptionIsWrittenAsMlCompilerOptWritesItAndReadsBack) {
  EXPECT_EQ(corpusDescriptionText({"a", "lib/b"}),
            "{\n  \"has_thinlto\": false,\n  \"modules\": [\n    \"a\",\n    \"lib/b\"\n  ]\n}\n");
  EXPECT_EQ(corpusDescriptionText({}), "{\n  \"has_thinlto\": false,\n  \"modules\": []\n}\n");
  auto back = parseCorpusDescription(corpusDescriptionText({"a", "lib/b"}));
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_THAT(*back, ElementsAre("a", "lib/b"));
}

TEST(CorpusLayoutTest, AppendRefusesDescriptionsItCannotExtend) {
  EXPECT_THAT(parseCorpusDescription("{\"has_thinlto\": true, \"modules\": []}").status().message(),
              HasSubstr("ThinLTO"));
  EXPECT_THAT(parseCorpusDescription("{\"modules\": [], \"global_command_override\": []}")
                  .status()
                  .message(),
              HasSubstr("global_command_override"));
  EXPECT_THAT(parseCorpusDescription("{\"modules\": [1]}").status().message(),
              HasSubstr("not a string"));
  EXPECT_THAT(parseCorpusDescription("{\"has_thinlto\": false}").status().message(),
              HasSubstr("no \"modules\""));
  EXPECT_THAT(parseCorpusDescription("{\"modules\": [").status().message(),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(parseCorpusDescription("[]").status().message(), HasSubstr("not a JSON object"));
}

TEST(JsonTreeTest, ParsesAndBoundsNesting) {
  auto value = parseJson(R"({"a": [1, true, null, "x\u0041\u00e9"], "b": {"c": -2.5}})", "test");
  ASSERT_TRUE(value.ok()) << value.status().toString();
  ASSERT_NE(value->member("a"), nullptr);
  EXPECT_EQ(value->member("a")->array.size(), 4u);
  EXPECT_EQ(value->member("a")->array[3].string, "xA\xc3\xa9");
  EXPECT_EQ(value->member("b")->member("c")->number, -2.5);
  auto escapes = parseJson(R"(["\ud83d\ude00", "\ud83d", "a\\u00e9", "\u20ac\n"])", "escapes");
  ASSERT_TRUE(escapes.ok()) << escapes.status().toString();
  EXPECT_EQ(escapes->array[0].string, "\xf0\x9f\x98\x80");
  EXPECT_EQ(escapes->array[1].string, "\xef\xbf\xbd");
  EXPECT_EQ(escapes->array[2].string, "a\\u00e9");  // an escaped backslash, then text
  EXPECT_EQ(escapes->array[3].string, "\xe2\x82\xac\n");
  EXPECT_EQ(value->member("missing"), nullptr);
  std::string deep(10000, '[');
  deep += std::string(10000, ']');
  EXPECT_EQ(parseJson(deep, "deep").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parseJson("{\"a\": 1", "cut").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parseJson("", "empty").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(parseJson("[1] trailing", "trailing").status().code(), ErrorCode::kInvalidArgument);
}

TEST(CompileDatabaseTest, ReadsBothFormsAndFlagsUnusableEntries) {
  auto entries = parseCompileDatabase(R"([
    {"directory": "/b", "arguments": ["cc", "-c", "a.c"], "file": "a.c", "output": "a.o"},
    {"directory": "/b", "command": "cc -DX=\"1 2\" -c /s/b.c", "file": "/s/b.c"},
    {"directory": "/b", "command": "cc -c c.c; rm -rf /", "file": "c.c"},
    {"directory": "rel", "arguments": ["cc"], "file": "d.c"},
    {"directory": "/b", "file": "e.c"},
    {"directory": "/b", "arguments": ["cc", 1], "file": "f.c"},
    {"arguments": ["cc"]}
  ])");
  ASSERT_TRUE(entries.ok()) << entries.status().toString();
  ASSERT_EQ(entries->size(), 7u);
  const auto& e = *entries;
  EXPECT_THAT(e[0].command.arguments, ElementsAre("cc", "-c", "a.c"));
  EXPECT_EQ(e[0].command.file, "/b/a.c");
  EXPECT_EQ(e[0].command.directory, "/b");
  EXPECT_EQ(e[0].problem, "");
  EXPECT_THAT(e[1].command.arguments, ElementsAre("cc", "-DX=1 2", "-c", "/s/b.c"));
  EXPECT_THAT(e[2].problem, HasSubstr("shell syntax"));
  EXPECT_THAT(e[3].problem, HasSubstr("absolute \"directory\""));
  EXPECT_THAT(e[4].problem, HasSubstr("neither"));
  EXPECT_THAT(e[5].problem, HasSubstr("non-string"));
  EXPECT_THAT(e[6].problem, HasSubstr("no \"file\""));
  for (std::size_t i = 2; i < e.size(); ++i) EXPECT_TRUE(e[i].command.arguments.empty());

  EXPECT_THAT(parseCompileDatabase("{}").status().message(), HasSubstr("not a JSON array"));
  EXPECT_THAT(parseCompileDatabase("[1]").status().message(), HasSubstr("entry 0"));
  EXPECT_THAT(parseCompileDatabase("[{").status().message(), HasSubstr("not valid JSON"));
}

std::vector<DatabaseEntry> database(const std::string& json) {
  auto entries = parseCompileDatabase(json);
  EXPECT_TRUE(entries.ok()) << entries.status().toString();
  return entries.ok() ? *entries : std::vector<DatabaseEntry>{};
}

TEST(ExtractionPlanTest, FirstCompileOfASourceWinsAndEverySkipHasAReason) {
  // libtool's two compiles of one file, a name clash, a refused command, a
  // file outside the root and one the corpus already has.
  auto entries = database(R"([
    {"directory": "/p/build", "command": "cc -fPIC -DPIC -c /p/src/a.c -o .libs/a.o", "file": "/p/src/a.c"},
    {"directory": "/p/build", "command": "cc -c /p/src/a.c -o a.o", "file": "/p/src/a.c"},
    {"directory": "/p/build", "command": "c++ -c /p/src/a.cpp", "file": "/p/src/a.cpp"},
    {"directory": "/p/build", "command": "cc -c /p/src/start.S", "file": "/p/src/start.S"},
    {"directory": "/p/build", "command": "cc -c /elsewhere/x.c", "file": "/elsewhere/x.c"},
    {"directory": "/p/build", "command": "cc -c /p/src/old.c", "file": "/p/src/old.c"},
    {"directory": "/p/build", "command": "cc -c /p/src/lib/b.c", "file": "/p/src/lib/b.c"},
    {"directory": "/p/build", "command": "cc -c /p/src/bad name.c", "file": "/p/src/bad name.c"}
  ])");
  PlanOptions options;
  options.output = "/corpus";
  options.sourceRoot = "/p/src";
  options.prefix = "proj";
  options.existingModules = {"proj/old"};
  ExtractionPlan plan = planExtraction(entries, options);
  ASSERT_EQ(plan.modules.size(), 2u);
  EXPECT_EQ(plan.modules[0].module, "proj/a");
  EXPECT_EQ(plan.modules[0].entry, 0u);
  EXPECT_THAT(plan.modules[0].compile.argv, ::testing::Contains("-fPIC"));
  EXPECT_EQ(plan.modules[0].compile.argv.back(), "/corpus/proj/a.bc.partial");
  EXPECT_EQ(plan.modules[1].module, "proj/lib/b");
  std::vector<std::pair<std::size_t, std::string>> reasons;
  for (const auto& [entry, skip] : plan.skipped) reasons.emplace_back(entry, skip.reason);
  EXPECT_THAT(
      reasons,
      ElementsAre(std::pair<std::size_t, std::string>{1, "compiled twice"},
                  std::pair<std::size_t, std::string>{2, "module name taken"},
                  std::pair<std::size_t, std::string>{3, "not one C/C++ compile"},
                  std::pair<std::size_t, std::string>{4, "outside the source root"},
                  std::pair<std::size_t, std::string>{5, "already in the corpus"},
                  std::pair<std::size_t, std::string>{7, "name not usable in a benchmark URI"}));
  EXPECT_THAT(plan.skipped[0].second.detail, HasSubstr("proj/a"));
  EXPECT_THAT(plan.skipped[1].second.detail, HasSubstr("/p/src/a.c"));
  EXPECT_THAT(plan.skipped[2].second.detail, HasSubstr("assembler"));
}

TEST(DiagnosticsTest, TrimmedToLinesAndBytes) {
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line " + std::to_string(i) + "\n";
  std::string trimmed = trimDiagnostics(many, 3, 1000);
  EXPECT_THAT(trimmed, ::testing::StartsWith("line 0\nline 1\nline 2\n[... "));
  EXPECT_THAT(trimmed, HasSubstr("more bytes of diagnostics cut]"));
  EXPECT_EQ(trimDiagnostics("short\n"), "short");
  std::string longLine(10000, 'x');
  EXPECT_LT(trimDiagnostics(longLine, 10, 100).size(), 200u);
}

TEST(BitcodeMagicTest, RawAndWrapperMagic) {
  EXPECT_TRUE(hasBitcodeMagic(std::string("BC\xC0\xDE\x35\x14", 6)));
  EXPECT_TRUE(hasBitcodeMagic(std::string("\xDE\xC0\x17\x0B\0\0", 6)));
  EXPECT_FALSE(hasBitcodeMagic("BC"));
  EXPECT_FALSE(hasBitcodeMagic("; ModuleID = 'x'"));
  EXPECT_FALSE(
      hasBitcodeMagic(std::string("\x7f"
                                  "ELF",
                                  4)));
}

}  // namespace
}  // namespace kiln::programs
