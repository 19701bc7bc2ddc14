// The clang command that writes a compile's bitcode, derived from the build's
// own command: which flags stay, which go, what is refused and why; and the
// word splitting of compile_commands.json's "command" form.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "programs/make/clang_command.h"
#include "programs/make/shell_words.h"

namespace kiln::programs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> words(const std::string& command) {
  auto split = splitShellWords(command);
  EXPECT_TRUE(split.ok()) << split.status().toString();
  return split.ok() ? *split : std::vector<std::string>{};
}

Result<BitcodeCompile> derive(const std::string& command, const std::string& file = "") {
  return bitcodeCompile(CompileCommand{words(command), "/build", file}, "/out/m.bc");
}

std::string refusal(const std::string& command, const std::string& file = "") {
  auto result = derive(command, file);
  EXPECT_FALSE(result.ok()) << command;
  if (result.ok()) return {};
  EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument);
  return result.status().message();
}

TEST(ShellWordsTest, SplitsLikeAShell) {
  EXPECT_THAT(words("  cc  -c   a.c "), ElementsAre("cc", "-c", "a.c"));
  EXPECT_THAT(words(R"(cc "-DNAME=\"kiln\"" '-DQ=a b' -DX=\"1\" a\ b.c)"),
              ElementsAre("cc", "-DNAME=\"kiln\"", "-DQ=a b", "-DX=\"1\"", "a b.c"));
  EXPECT_THAT(words("cc ''  \"\" x"), ElementsAre("cc", "", "", "x"));
  EXPECT_THAT(words("cc \\\n -c"), ElementsAre("cc", "-c"));
  EXPECT_THAT(words(R"(cc "a\\b" 'c\d')"), ElementsAre("cc", "a\\b", "c\\d"));
  EXPECT_THAT(words(""), ElementsAre());
}

TEST(ShellWordsTest, RefusesWhatOnlyAShellWouldRun) {
  for (const char* command :
       {"cc -c a.c; rm -rf /", "cc -c a.c | tee x", "cc -c a.c && true", "cc -c a.c > out",
        "cc -c $(whoami).c", "cc -c `id`.c", "cc -c $HOME/a.c", "cc \"-D$X\"", "cc -c *.c",
        "cc -c a.c # comment", "cc ~/a.c", "cc 'unterminated", "cc \"unterminated", "cc trailing\\",
        "(cc -c a.c)"}) {
    auto split = splitShellWords(command);
    EXPECT_FALSE(split.ok()) << command;
    if (!split.ok()) {
      EXPECT_EQ(split.status().code(), ErrorCode::kInvalidArgument);
      EXPECT_THAT(split.status().message(), HasSubstr("shell syntax")) << command;
    }
  }
}

TEST(ClangCommandTest, CMakeStyleCommandKeepsWhatShapesTheIr) {
  auto result = derive(
      "/usr/bin/cc -DNDEBUG -I/src/include -isystem /usr/include/foo -O2 -g -std=gnu11 -fPIC "
      "-march=x86-64-v2 -Wall -Werror -MD -MT CMakeFiles/x.dir/a.c.o -MF CMakeFiles/x.dir/a.c.o.d "
      "-o CMakeFiles/x.dir/a.c.o -c /src/a.c",
      "/src/a.c");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_THAT(result->argv,
              ElementsAre("clang-19", "-DNDEBUG", "-I/src/include", "-isystem", "/usr/include/foo",
                          "-O2", "-std=gnu11", "-fPIC", "-march=x86-64-v2", "-Xclang",
                          "-disable-llvm-passes", "-w", "-fverify-intermediate-code", "-emit-llvm",
                          "-c", "/src/a.c", "-o", "/out/m.bc"));
  EXPECT_EQ(result->source, "/src/a.c");
  EXPECT_EQ(result->workingDirectory, "/build");
  EXPECT_EQ(result->language, SourceLanguage::kC);
  EXPECT_THAT(result->moduleFlags, ElementsAre("-O2", "-fPIC", "-march=x86-64-v2"));
}

TEST(ClangCommandTest, OptimizationLevelZeroKeepsFunctionsOptimizable) {
  for (const char* command : {"cc -c a.c", "cc -O3 -O0 -c a.c"}) {
    auto result = derive(command);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_THAT(result->argv, ::testing::Contains("-disable-O0-optnone")) << command;
  }
  for (const char* command : {"cc -O0 -O2 -c a.c", "cc -Os -c a.c", "cc -O -c a.c"}) {
    auto result = derive(command);
    ASSERT_TRUE(result.ok()) << result.status().toString();
    EXPECT_THAT(result->argv, ::testing::Not(::testing::Contains("-disable-O0-optnone")))
        << command;
  }
}

TEST(ClangCommandTest, DropsOutputModeDependencyLtoDebugAndLinkerFlags) {
  auto result = derive(
      "gcc -c -S -E -M -MM -MD -MMD -MP -MG -MFdeps.d -MT t -MQ q -MJ db.json -o a.o -oother.o "
      "-save-temps=obj -flto=auto -flto -ffat-lto-objects -fembed-bitcode=all -pipe -g3 -ggdb "
      "-gdwarf-4 -gsplit-dwarf -Wl,--as-needed -Wa,--noexecstack -Xlinker -z -lm -L/lib -shared "
      "-fuse-ld=lld -Wp,-MD,deps.d -Wextra -pedantic -resource-dir /opt/clang17/lib -B/opt/bin "
      "-v -fwhole-program-vtables -Xclang -emit-obj -fno-omit-frame-pointer a.c");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_THAT(result->argv,
              ElementsAre("clang-19", "-fno-omit-frame-pointer", "-Xclang", "-disable-O0-optnone",
                          "-Xclang", "-disable-llvm-passes", "-w", "-fverify-intermediate-code",
                          "-emit-llvm", "-c", "/build/a.c", "-o", "/out/m.bc"));
  EXPECT_THAT(result->moduleFlags, ElementsAre("-fno-omit-frame-pointer"));
}

TEST(ClangCommandTest, PreprocessorAndLanguageFlagsAreNotModuleFlags) {
  auto result = derive(
      "clang -c -D A=1 -UB -include config.h -imacros m.h -iquote q -idirafter d --sysroot=/sr "
      "-isysroot /sr -nostdinc -std=c99 -ansi -Xpreprocessor -DZ -Wp,-DY -x c a.inc "
      "--target=aarch64-linux-gnu -mllvm -inline-threshold=10 -Xclang -fno-pch-timestamp "
      "-ffast-math -O1 -pthread");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_THAT(result->moduleFlags,
              ElementsAre("--target=aarch64-linux-gnu", "-mllvm", "-inline-threshold=10", "-Xclang",
                          "-fno-pch-timestamp", "-ffast-math", "-O1", "-pthread"));
  // The preprocessor's flags stay in the compile, and -x c is said before the source.
  std::vector<std::string> tail(result->argv.end() - 5, result->argv.end());
  EXPECT_THAT(tail, ElementsAre("-x", "c", "/build/a.inc", "-o", "/out/m.bc"));
  EXPECT_THAT(result->argv, ::testing::IsSupersetOf({"-D", "A=1", "-UB", "-include", "config.h",
                                                     "-nostdinc", "-std=c99", "-Xpreprocessor",
                                                     "-DZ", "-Wp,-DY", "--sysroot=/sr"}));
}

TEST(ClangCommandTest, LanguageComesFromTheExtensionTheDriverOrMinusX) {
  auto cxx = derive("c++ -std=c++17 -c src/a.cpp");
  ASSERT_TRUE(cxx.ok()) << cxx.status().toString();
  EXPECT_EQ(cxx->language, SourceLanguage::kCxx);
  EXPECT_EQ(cxx->argv.front(), "clang++-19");
  EXPECT_EQ(cxx->source, "/build/src/a.cpp");

  // g++ compiles a .c file as C++: kiln says so explicitly.
  auto cxxDriver = derive("/usr/bin/x86_64-linux-gnu-g++-12 -c a.c");
  ASSERT_TRUE(cxxDriver.ok()) << cxxDriver.status().toString();
  EXPECT_EQ(cxxDriver->language, SourceLanguage::kCxx);
  EXPECT_THAT(cxxDriver->argv, ::testing::Contains("c++"));

  auto xc = derive("g++ -x c -c a.cc");
  ASSERT_TRUE(xc.ok()) << xc.status().toString();
  EXPECT_EQ(xc->language, SourceLanguage::kC);
  EXPECT_EQ(xc->argv.front(), "clang-19");

  auto joined = derive("cc -xc++ -c a.c");
  ASSERT_TRUE(joined.ok()) << joined.status().toString();
  EXPECT_EQ(joined->language, SourceLanguage::kCxx);

  auto preprocessed = derive("cc -c a.i");
  ASSERT_TRUE(preprocessed.ok()) << preprocessed.status().toString();
  EXPECT_EQ(preprocessed->language, SourceLanguage::kC);

  // A launcher in front of the compiler is not the compiler.
  auto launched = derive("ccache g++ -c a.cc");
  ASSERT_TRUE(launched.ok()) << launched.status().toString();
  EXPECT_EQ(launched->argv.front(), "clang++-19");
}

TEST(ClangCommandTest, CompilersAreTheCallersChoice) {
  BitcodeCompilers compilers{"/opt/llvm19/bin/clang", "/opt/llvm19/bin/clang++"};
  auto result =
      bitcodeCompile(CompileCommand{{"g++", "-c", "a.cc"}, "/b", ""}, "rel/m.bc", compilers);
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->argv.front(), "/opt/llvm19/bin/clang++");
  EXPECT_EQ(result->argv.back(), "/b/rel/m.bc");
}

TEST(ClangCommandTest, TheFileFieldPicksAndChecksTheSource) {
  auto result = derive("cc -c ../src/./a.c -o a.o", "/src/a.c");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->source, "/src/a.c");
  EXPECT_THAT(refusal("cc -c a.c", "b.c"), HasSubstr("does not compile its file /build/b.c"));
}

TEST(ClangCommandTest, RefusesWhatIsNotOneCompileOfOneSource) {
  EXPECT_THAT(refusal("cc a.c -o prog"), HasSubstr("links"));
  EXPECT_THAT(refusal("cc -c a.c b.c"), HasSubstr("several inputs (a.c and b.c)"));
  EXPECT_THAT(refusal("cc -c a.c lib.o"), HasSubstr("several inputs"));
  EXPECT_THAT(refusal("cc -c -o a.o"), HasSubstr("no input"));
  EXPECT_THAT(refusal("cc -c -"), HasSubstr("standard input"));
  EXPECT_THAT(refusal("cc -c start.S"), HasSubstr("assembler"));
  EXPECT_THAT(refusal("cc -c start.s"), HasSubstr("assembler"));
  EXPECT_THAT(refusal("cc -x assembler-with-cpp -c start.txt"), HasSubstr("not C or C++"));
  EXPECT_THAT(refusal("cc -x objective-c -c a.c"), HasSubstr("not C or C++"));
  EXPECT_THAT(refusal("cc -c a.m"), HasSubstr("Objective-C"));
  EXPECT_THAT(refusal("cc -c a.h"), HasSubstr("header"));
  EXPECT_THAT(refusal("cc -x c-header -c a.c"), HasSubstr("header"));
  EXPECT_THAT(refusal("cc -c a.ll"), HasSubstr("LLVM IR"));
  EXPECT_THAT(refusal("nvcc -c a.cu"), HasSubstr("not a C or C++ source"));
  EXPECT_THAT(refusal("cc -c a.c @flags.rsp"), HasSubstr("response file"));
  EXPECT_THAT(refusal("cl.exe /c a.c"), HasSubstr("MSVC"));
  EXPECT_THAT(refusal(""), HasSubstr("empty"));
  EXPECT_THAT(refusal("ccache"), HasSubstr("empty"));
  EXPECT_THAT(refusal("cc -c a.c -o"), HasSubstr("-o has no value"));
  EXPECT_THAT(refusal("cc -c a.c -x"), HasSubstr("-x has no language"));
  EXPECT_THAT(refusal("cc -c a.c -Xclang"), HasSubstr("-Xclang has no value"));
}

TEST(ClangCommandTest, RefusesFlagsThatRunOtherCode) {
  EXPECT_THAT(refusal("cc -c a.c -fplugin=/tmp/evil.so"), HasSubstr("plugin"));
  EXPECT_THAT(refusal("cc -c a.c -fpass-plugin=/tmp/evil.so"), HasSubstr("plugin"));
  EXPECT_THAT(refusal("cc -c a.c -Xclang -load -Xclang /tmp/evil.so"), HasSubstr("plugin"));
  EXPECT_THAT(refusal("cc -c a.c -Xclang -plugin -Xclang x"), HasSubstr("plugin"));
  EXPECT_THAT(refusal("cc -c a.c --config=/tmp/x.cfg"), HasSubstr("from a file"));
  EXPECT_THAT(refusal("cc -c a.c -###"), HasSubstr("prints the commands"));
  EXPECT_THAT(refusal("cc --analyze a.c"), HasSubstr("static analyzer"));
  EXPECT_THAT(refusal("cc -c a.c -ccc-print-phases"), HasSubstr("debug flag"));
}

TEST(ClangCommandTest, AHostileCommandCannotChooseTheOutputOrTheDirectory) {
  // The output is always the caller's, whatever -o or --output the command says.
  auto result = derive("cc -c a.c -o /etc/passwd -o/etc/shadow");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  EXPECT_EQ(result->argv.back(), "/out/m.bc");
  EXPECT_EQ(std::count(result->argv.begin(), result->argv.end(), "-o"), 1);
  auto relative = bitcodeCompile(CompileCommand{{"cc", "-c", "a.c"}, "build", ""}, "/o.bc");
  EXPECT_EQ(relative.status().code(), ErrorCode::kInvalidArgument);
}

TEST(ClangCommandTest, SourceLanguageByName) {
  EXPECT_EQ(*languageOfSource("a.c", false), SourceLanguage::kC);
  EXPECT_EQ(*languageOfSource("a.c", true), SourceLanguage::kCxx);
  EXPECT_EQ(*languageOfSource("a.C", false), SourceLanguage::kCxx);
  EXPECT_EQ(*languageOfSource("a.cxx", false), SourceLanguage::kCxx);
  EXPECT_EQ(*languageOfSource("a.ii", false), SourceLanguage::kCxx);
  EXPECT_FALSE(languageOfSource("Makefile", false).ok());
}

TEST(ClangCommandTest, ArgumentsClangDoesNotKnowAreDroppedForARetry) {
  std::string diagnostics =
      "clang-19: error: unknown argument: '-fipa-pta'\n"
      "clang-19: error: unknown argument '-fconserve-stak'; did you mean '-fconserve-stack'?\n"
      "clang-19: error: unknown argument: '-fno-cc1-only'\n";
  EXPECT_THAT(unknownArguments(diagnostics),
              ElementsAre("-fipa-pta", "-fno-cc1-only", "-fconserve-stak"));
  EXPECT_THAT(unknownArguments("a.c:1:1: error: unknown type name 'x'"), ElementsAre());

  auto compile = derive("gcc -O0 -fipa-pta -fPIC -Xclang -fno-cc1-only -fconserve-stak -c a.c");
  ASSERT_TRUE(compile.ok()) << compile.status().toString();
  EXPECT_TRUE(dropUnknownArguments(*compile, unknownArguments(diagnostics)));
  EXPECT_THAT(compile->argv,
              ElementsAre("clang-19", "-O0", "-fPIC", "-Xclang", "-disable-O0-optnone", "-Xclang",
                          "-disable-llvm-passes", "-w", "-fverify-intermediate-code", "-emit-llvm",
                          "-c", "/build/a.c", "-o", "/out/m.bc"));
  EXPECT_THAT(compile->moduleFlags, ElementsAre("-O0", "-fPIC"));
  // Nothing left to drop: a retry would fail the same way.
  EXPECT_FALSE(dropUnknownArguments(*compile, unknownArguments(diagnostics)));
  // kiln's own flags are never dropped, whatever a diagnostic says.
  EXPECT_FALSE(dropUnknownArguments(*compile, {"-emit-llvm", "-disable-O0-optnone", "-c", "-w"}));
  EXPECT_EQ(compile->argv.size(), 14u);
}

TEST(ClangCommandTest, CmdFileTextIsNulSeparated) {
  EXPECT_EQ(cmdFileText({"-O2", "-fPIC"}), std::string("-O2\0-fPIC", 9));
  EXPECT_EQ(cmdFileText({}), "");
}

}  // namespace
}  // namespace kiln::programs
