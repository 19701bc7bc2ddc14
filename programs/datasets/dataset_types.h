// Values the datasets library hands out and the configuration a worker gives it:
// where the tools are, where scratch files go, and the limits that protect the
// worker from oversized or runaway benchmarks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/file_access.h>

namespace kiln::datasets {

enum class Format : std::uint8_t {
  kBitcode,  // LLVM bitcode (.bc)
  kIr,       // textual LLVM IR (.ll)
};

struct BenchmarkBytes {
  std::string uri;    // canonical URI of the benchmark
  std::string bytes;  // the module, in `format`
  Format format = Format::kBitcode;
};

struct DatasetInfo {
  std::string name;                  // "benchmark://kiln-bench-v0"
  std::optional<std::int64_t> size;  // benchmarks in it; nullopt = unbounded generator
  std::string description;
  std::uint64_t bytes = 0;     // total size of its modules (0 for generators)
  std::uint64_t skipped = 0;   // files its scan left out
  std::uint64_t rejected = 0;  // modules LLVM 19 refused when a session loaded them
};

// A benchmark as a listing names it, with its size in bytes.
struct BenchmarkListing {
  std::string uri;
  std::uint64_t bytes = 0;
};

// At most this many problems of each kind are kept per dataset with their
// reasons; the counts go on.
inline constexpr std::size_t kMaxProblemsKept = 1000;

// A module a dataset does not serve, and why: "skipped" when the scan left it
// out, "rejected" when a session loaded it and LLVM 19 refused it.
struct BenchmarkProblem {
  std::string module;  // the benchmark's name, or the file's relative path
  std::string kind;    // "skipped" or "rejected"
  std::string reason;
};

// A directory of .bc/.ll files, or an MLGO corpus (corpus_description.json at its
// root), served as benchmark://<name>/<relative path without extension>. Its
// files are read only below `root`, by the same rule as file:// below an
// --allow-files directory.
struct CorpusDirectory {
  std::string name;
  std::filesystem::path root;
};

struct DatasetConfig {
  // Tools: a bare name is looked up in PATH; Debian's names are the defaults.
  std::filesystem::path clang = "clang-19";
  std::filesystem::path csmith = "csmith";
  std::filesystem::path llvmStress = "llvm-stress-19";
  std::filesystem::path csmithIncludeDir = "/usr/include/csmith";  // Debian libcsmith-dev

  // Generator work happens in fresh subdirectories of this; empty = the system temp dir.
  std::filesystem::path scratchDirectory;
  std::chrono::milliseconds generatorTimeout{30'000};  // csmith, llvm-stress
  std::chrono::milliseconds compileTimeout{60'000};    // clang on generated C
  std::optional<std::uint64_t> toolMemoryLimitBytes = std::uint64_t{4} << 30;

  // file:// URIs read .bc/.ll files only below these directories (a worker
  // passes its --allow-files ones), never through a symlink or '..' that
  // leaves them; none = file:// refused (permission denied).
  FileAccess fileAccess;

  // Larger files or generated modules are refused (invalid argument).
  std::uint64_t maxBenchmarkBytes = std::uint64_t{64} << 20;

  // Keeps csmith programs moderate: a few thousand IR instructions, ~0.1 s to
  // generate and compile. The seed is added by the generator.
  std::vector<std::string> csmithArgs = {"--max-funcs", "6", "--max-block-depth", "3",
                                         "--no-packed-struct"};
  int llvmStressSize = 200;  // llvm-stress -size

  std::vector<CorpusDirectory> corpora;
};

}  // namespace kiln::datasets
