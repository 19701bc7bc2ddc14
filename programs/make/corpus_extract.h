// `kiln corpus extract`: a build's compile_commands.json (CMake's, or bear's
// for make builds) to a corpus in ml-compiler-opt's layout
// (programs/make/corpus_layout.h) that `--dataset NAME=DIR` serves. Each compile
// runs clang-19 (programs/make/clang_command.h) on its own thread, bounded in
// time and memory; every module written is checked to be bitcode within the
// size limit that LLVM 19 reads and verifies (ExtractOptions::readBack), so
// the corpus holds only modules its workers accept. What is not extracted is reported with the
// reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "programs/make/corpus_layout.h"

namespace kiln::programs {

// After each compile of the build is decided (extracted or skipped).
struct ExtractProgress {
  std::size_t done = 0;   // compiles decided so far
  std::size_t total = 0;  // compiles in compile_commands.json
  std::size_t extracted = 0;
  std::size_t skipped = 0;
  std::string source;   // the one just decided
  std::string outcome;  // "extracted" or its skip reason
};

struct ExtractOptions {
  std::filesystem::path compileCommands;  // the compile_commands.json file
  std::filesystem::path output;           // the corpus directory (created if missing)
  // Module names are source paths relative to this; empty: the deepest
  // directory holding every source of the build.
  std::filesystem::path sourceRoot;
  std::string prefix;   // module names under "<prefix>/" when not empty
  bool append = false;  // add to the corpus already in `output`
  unsigned jobs = 0;    // compiles at once; 0: the machine's cores
  std::string clang = "clang-19";
  std::string clangxx = "clang++-19";
  // Every module written is read back and verified by `opt` (-passes=verify):
  // only modules LLVM 19 accepts enter the corpus, whichever compiler wrote
  // them. false trusts clang's own verifier (-fverify-intermediate-code) on
  // the module it writes, as good when the compiler is LLVM 19's clang, and
  // saves the opt run (about a third of a module's time).
  bool readBack = true;
  std::string opt = "opt-19";
  std::chrono::milliseconds timeoutPerModule{120'000};
  std::uint64_t memoryPerModuleBytes = std::uint64_t{4} << 30;  // RLIMIT_AS of each tool
  std::uint64_t maxModuleBytes = std::uint64_t{64} << 20;       // as the workers' default
  // Called on the thread that called extractCorpus, once per compile.
  std::function<void(const ExtractProgress&)> onProgress;
};

struct ExtractedModule {
  std::string source;
  std::string module;
  std::uint64_t bytes = 0;
  // The build's flags clang-19 does not know (GCC's), left out of the compile and the .cmd.
  std::vector<std::string> droppedFlags;
};

struct ExtractReport {
  std::filesystem::path output;
  std::filesystem::path sourceRoot;
  std::vector<ExtractedModule> extracted;  // in the build's order
  std::vector<SkippedSource> skipped;      // in the build's order
  std::size_t corpusModules = 0;           // in the corpus afterwards (more with --append)
  std::chrono::milliseconds elapsed{0};
};

// invalid-argument for options or a compile_commands.json that cannot be
// used at all (not JSON, no entries, an output that already holds a corpus
// without `append`, a description --append cannot extend); not-found when
// clang-19 or opt-19 does not exist. A compile that fails is no error: it is
// in the report's `skipped`.
Result<ExtractReport> extractCorpus(const ExtractOptions& options);

// Skip reasons with how many compiles each, most frequent first.
std::vector<std::pair<std::string, std::size_t>> skippedByReason(const ExtractReport& report);

// The report as JSON: totals, the reasons' counts, and every compile's outcome.
std::string reportJson(const ExtractReport& report);

}  // namespace kiln::programs
