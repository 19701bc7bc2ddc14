#include "programs/datasets/corpus_check.h"

#include "compilers/llvm_engine/module_check.h"
#include "programs/datasets/benchmark_uri.h"
#include "programs/datasets/corpus_index.h"

namespace kiln::datasets {

Result<CorpusCheckReport> checkCorpus(
    const std::filesystem::path& directory, std::uint64_t maxBytes,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  // The directory's own name labels the modules in messages when it can.
  std::string name = directory.filename().string();
  if (name.empty()) name = directory.parent_path().filename().string();
  if (!isValidDatasetName(name)) name = "corpus";
  KILN_ASSIGN_OR_RETURN(CorpusIndex index, CorpusIndex::scan({name, directory}));
  CorpusCheckReport report;
  report.description = index.description();
  report.modules = index.size();
  report.bytes = index.totalBytes();
  report.skipped = index.skippedCount();
  report.problems = index.skipped();
  std::size_t kept = 0;
  std::size_t done = 0;
  for (const auto& [module, entry] : index.entries(index.size())) {
    Status checked = okStatus();
    auto bytes = index.read(*entry, maxBytes);
    if (bytes.ok()) {
      checked = llvm_engine::checkModule(*bytes, "benchmark://" + name + "/" + module);
    } else {
      checked = bytes.status();
    }
    if (checked.ok()) {
      ++report.accepted;
    } else {
      ++report.rejected;
      if (kept++ < kMaxProblemsKept)
        report.problems.push_back({module, "rejected", checked.message()});
    }
    if (progress) progress(++done, index.size());
  }
  return report;
}

}  // namespace kiln::datasets
