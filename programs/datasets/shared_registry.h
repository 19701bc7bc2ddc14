// One dataset registry per worker process, shared by every context that
// serves datasets (llvm and the mlgo types): the first context's init()
// builds it, the others take the same one, so each corpus is scanned once.
// Owned by whoever makes the process's contexts (tools/local_cluster/builtin_types.cpp
// hands one to each factory); never a global.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>

#include <kiln/file_access.h>
#include <kiln/status.h>
#include "programs/datasets/registry.h"

namespace kiln::datasets {

// The configuration a worker's contexts give the registry: scratch files
// under its working directory, file:// below its --allow-files directories,
// its benchmark size limit, and the operator's corpora.
DatasetConfig workerDatasetConfig(const std::filesystem::path& scratchDirectory,
                                  const FileAccess& files, std::uint64_t maxBenchmarkBytes,
                                  std::vector<CorpusDirectory> corpora);

class SharedDatasetRegistry {
 public:
  // The registry, built with `config()` on the first call; later calls get
  // the same one (every context of a process has the same resources). A
  // failed build is not kept: the next call tries again.
  Result<std::shared_ptr<const DatasetRegistry>> get(const std::function<DatasetConfig()>& config);

 private:
  std::mutex mutex_;  // contexts start one by one today; cheap insurance
  std::shared_ptr<const DatasetRegistry> registry_;
};

}  // namespace kiln::datasets
