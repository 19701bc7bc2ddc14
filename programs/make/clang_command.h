// From one compile command of a build (compile_commands.json's entry, or a
// user's own compiler invocation) to the clang-19 command that writes that
// source's unoptimized LLVM 19 bitcode, and the module's own flags for its
// ml-compiler-opt `.cmd` file. Pure: nothing here runs or reads anything.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::programs {

enum class SourceLanguage : std::uint8_t { kC, kCxx };

// One compile as the build ran it.
struct CompileCommand {
  std::vector<std::string> arguments;  // arguments[0] is the compiler (gcc, clang, c++, ...)
  std::filesystem::path directory;     // where it ran; relative paths are taken from here
  std::filesystem::path file;          // the source it compiles; empty: its one input
};

// The compilers that write the bitcode; a bare name is looked up in PATH.
struct BitcodeCompilers {
  std::string clang = "clang-19";
  std::string clangxx = "clang++-19";
};

struct BitcodeCompile {
  // Run in `workingDirectory`: writes the bitcode to the output given.
  std::vector<std::string> argv;
  std::filesystem::path workingDirectory;
  std::filesystem::path source;  // absolute and lexically normal
  SourceLanguage language = SourceLanguage::kC;
  // The module's own flags, for its .cmd file: what shapes code generation
  // from its IR, so that `clang-19 <moduleFlags> -c -x ir M.bc -o M.o`
  // builds it as the build did. That is every flag kept for the bitcode
  // compile except the preprocessor's (-I -D -U -include -isystem -iquote
  // -idirafter -isysroot --sysroot -nostdinc* -Wp, -Xpreprocessor ...), the
  // language's (-x, -std, -ansi) and the ones kiln adds; in the build's order.
  std::vector<std::string> moduleFlags;
};

// The clang command for `command`, writing `output`, which the caller names
// (absolute, or relative to the command's directory):
//  - drops what decides the output and the compile mode (-o X, -c, -S, -E,
//    -M, -MM, -fsyntax-only, -emit-llvm, -pipe, -save-temps, -v), the
//    dependency files (-MD -MMD -MF X -MT X -MQ X -MP -MG -MJ X), LTO and
//    embedded bitcode (-flto* -fembed-bitcode* and what needs them), the
//    linker's and assembler's flags (-l -L -Wl, -Xlinker -Wa, -shared ...),
//    warnings (-W* -pedantic; kiln adds -w: warnings never change the IR and
//    would crowd out the errors in a trimmed diagnostic), a foreign
//    compiler's -resource-dir and -B;
//  - drops debug information (-g*): it multiplies a module's size, writes
//    the build host's paths into the corpus, and its llvm.dbg intrinsics
//    count as instructions in kiln's instruction-count rewards and features,
//    so the same program would score differently with and without -g;
//  - keeps what shapes the IR (-I -D -U -include -std -f* -m* --target
//    -isystem -mllvm, -O level, other -Xclang flags ...);
//  - adds `-Xclang -disable-llvm-passes -emit-llvm -c -o OUT` (and
//    -fverify-intermediate-code: clang verifies the module it writes): the front
//    end's shape of the -O level (lifetime markers, TBAA at -O1 and above)
//    with every IR optimization left to the agent, as kiln-bench-v0 is
//    built. At -O0 (also when no -O is given) it adds `-Xclang
//    -disable-O0-optnone`, else clang marks every function optnone and the
//    agent's passes would all be no-ops.
// invalid-argument, naming the reason, for what is not one compile of one
// C or C++ source: linking (no -c/-S/-E), several or no inputs, stdin
// ("-"), another language (-x, assembler .s/.S, Objective-C, headers, CUDA,
// IR, ...), MSVC-style drivers, response files (@file: not expanded), and
// what would run code other than clang's own (-fplugin, -fpass-plugin,
// -Xclang -load/-plugin, --config) or is not a compile (--analyze, -###).
Result<BitcodeCompile> bitcodeCompile(const CompileCommand& command,
                                      const std::filesystem::path& output,
                                      const BitcodeCompilers& compilers = {});

// The language of a source by its file name alone (clang's rules), with
// `cxxDriver` for a C++ driver (g++, clang++) that compiles .c as C++.
// invalid-argument for a file that is not a C or C++ source.
Result<SourceLanguage> languageOfSource(const std::filesystem::path& source, bool cxxDriver);

// The arguments clang-19 calls unknown in its diagnostics ("clang-19: error:
// unknown argument: '-fipa-pta'", also the "did you mean" form): flags of
// GCC that a build compiled with gcc records and clang does not have.
std::vector<std::string> unknownArguments(std::string_view diagnostics);

// `compile` without the build's arguments in `unknown` (in argv and in
// moduleFlags); false when none of them is there to drop (the compile would
// fail again as it did).
bool dropUnknownArguments(BitcodeCompile& compile, const std::vector<std::string>& unknown);

// `.cmd` file contents: the flags NUL-separated, as ml-compiler-opt writes them.
std::string cmdFileText(const std::vector<std::string>& flags);

}  // namespace kiln::programs
