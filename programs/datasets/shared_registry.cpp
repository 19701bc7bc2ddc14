#include "programs/datasets/shared_registry.h"

namespace kiln::datasets {

DatasetConfig workerDatasetConfig(const std::filesystem::path& scratchDirectory,
                                  const FileAccess& files, std::uint64_t maxBenchmarkBytes,
                                  std::vector<CorpusDirectory> corpora) {
  DatasetConfig config;
  config.scratchDirectory = scratchDirectory;
  config.fileAccess = files;
  config.maxBenchmarkBytes = maxBenchmarkBytes;
  config.corpora = std::move(corpora);
  return config;
}

Result<std::shared_ptr<const DatasetRegistry>> SharedDatasetRegistry::get(
    const std::function<DatasetConfig()>& config) {
  std::lock_guard lock(mutex_);
  if (registry_ == nullptr) {
    KILN_ASSIGN_OR_RETURN(DatasetRegistry registry, DatasetRegistry::create(config()));
    registry_ = std::make_shared<const DatasetRegistry>(std::move(registry));
  }
  return registry_;
}

}  // namespace kiln::datasets
