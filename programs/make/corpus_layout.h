// ml-compiler-opt's corpus layout, as kiln writes it: corpus_description.json
// ({"has_thinlto": false, "modules": [...]}, read back by
// programs/datasets/corpus_index.cpp), and one <module>.bc and <module>.cmd per module
// (the .cmd holds the module's flags NUL-separated, see
// programs/make/clang_command.h). Module names, and which compile of a build
// becomes which module. Pure.
#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "programs/make/clang_command.h"
#include "programs/make/compile_database.h"

namespace kiln::programs {

inline constexpr std::string_view kCorpusDescriptionFile = "corpus_description.json";

// Why a compile of the build is not in the corpus. The first word groups
// them in reports; the detail (a SkippedSource's) says more.
namespace skip_reason {
inline constexpr std::string_view kUnusableEntry = "unusable compile_commands entry";
inline constexpr std::string_view kNotOneCompile = "not one C/C++ compile";
inline constexpr std::string_view kCompiledTwice = "compiled twice";
inline constexpr std::string_view kOutsideRoot = "outside the source root";
inline constexpr std::string_view kBadName = "name not usable in a benchmark URI";
inline constexpr std::string_view kNameTaken = "module name taken";
inline constexpr std::string_view kAlreadyInCorpus = "already in the corpus";
inline constexpr std::string_view kCompileError = "compile error";
inline constexpr std::string_view kCompileTimeout = "compile timed out";
inline constexpr std::string_view kCompilerCrashed = "compiler crashed";
inline constexpr std::string_view kTooBig = "module over the size limit";
inline constexpr std::string_view kNotBitcode = "output is not bitcode";
inline constexpr std::string_view kVerifierRejected = "rejected by the LLVM 19 verifier";
inline constexpr std::string_view kWriteFailed = "could not write the module";
}  // namespace skip_reason

// The deepest directory that holds every one of `files` (absolute paths);
// empty for no files.
std::filesystem::path commonSourceRoot(const std::vector<std::filesystem::path>& files);

// "<prefix>/<source relative to root, without extension>". invalid-argument
// when the source is not below the root, or the name would not be a valid
// benchmark URI path (programs/datasets/benchmark_uri.h: printable ASCII, no space,
// '%', '?', '#', '\', no empty, '.' or '..' segment).
Result<std::string> moduleNameFor(const std::filesystem::path& source,
                                  const std::filesystem::path& sourceRoot, std::string_view prefix);
Status checkModuleName(std::string_view name);

// The description as ml-compiler-opt writes it (json.dump with indent 2).
std::string corpusDescriptionText(const std::vector<std::string>& modules);
// The modules of an existing description, for --append. invalid-argument
// when it is not one kiln can add to: not JSON, no "modules" list of
// strings, a ThinLTO corpus, or keys kiln would drop when rewriting it.
Result<std::vector<std::string>> parseCorpusDescription(std::string_view text);

// A compiler's diagnostics cut to their first `maxLines` lines and
// `maxBytes` bytes, saying how much was cut.
std::string trimDiagnostics(std::string_view text, std::size_t maxLines = 12,
                            std::size_t maxBytes = 2048);

struct SkippedSource {
  std::string source;  // as the build names it (absolute)
  std::string module;  // the name it would have had; empty if none
  std::string reason;  // one of skip_reason
  std::string detail;
};

struct PlannedModule {
  std::size_t entry = 0;  // index in the database
  std::string module;
  BitcodeCompile compile;  // writes partialBitcodePath(output, module)
};

struct ExtractionPlan {
  std::vector<PlannedModule> modules;
  std::vector<std::pair<std::size_t, SkippedSource>> skipped;  // with their entry index
};

struct PlanOptions {
  std::filesystem::path output;      // the corpus directory
  std::filesystem::path sourceRoot;  // absolute
  std::string prefix;
  std::set<std::string, std::less<>> existingModules;  // already in the corpus (--append)
  BitcodeCompilers compilers;
};

// Which entries become which modules. The first usable compile of a source
// wins; later ones are skipped as compiled twice (libtool compiles each
// source with and without -fPIC). Two sources with one module name (a.c and
// a.cpp): the first wins.
ExtractionPlan planExtraction(const std::vector<DatabaseEntry>& entries,
                              const PlanOptions& options);

std::filesystem::path bitcodePath(const std::filesystem::path& output, std::string_view module);
std::filesystem::path partialBitcodePath(const std::filesystem::path& output,
                                         std::string_view module);
std::filesystem::path cmdPath(const std::filesystem::path& output, std::string_view module);

}  // namespace kiln::programs
