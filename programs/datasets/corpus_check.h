// `kiln datasets check DIR`: every module of a corpus directory (either
// layout, corpus_index.h) read and checked in this process as a session
// would load it (compilers/llvm_engine/module_check.h), before an operator serves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "programs/datasets/dataset_types.h"

namespace kiln::datasets {

struct CorpusCheckReport {
  std::string description;  // as a worker would list it
  std::size_t modules = 0;  // indexed (served) modules
  std::size_t accepted = 0;
  std::uint64_t bytes = 0;
  std::size_t skipped = 0;   // left out by the scan
  std::size_t rejected = 0;  // refused when read or by LLVM 19
  // Skipped then rejected, each with its reason; at most kMaxProblemsKept of each.
  std::vector<BenchmarkProblem> problems;
  bool clean() const { return skipped == 0 && rejected == 0; }
};

// Scans `directory` and checks each module (at most `maxBytes` each);
// `progress(done, total)` after each. Errors only when the directory cannot
// be scanned at all (missing, a malformed corpus_description.json).
Result<CorpusCheckReport> checkCorpus(
    const std::filesystem::path& directory, std::uint64_t maxBytes,
    const std::function<void(std::size_t, std::size_t)>& progress = nullptr);

}  // namespace kiln::datasets
