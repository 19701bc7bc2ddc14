#include "common/working_directory.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <system_error>

namespace kiln {

Result<WorkingDirectory> WorkingDirectory::create(const std::filesystem::path& base,
                                                  const std::string& prefix) {
  std::error_code error;
  std::filesystem::path root = base.empty() ? std::filesystem::temp_directory_path(error) : base;
  if (error) return internalError("no temporary directory: " + error.message());
  std::filesystem::create_directories(root, error);
  if (error) {
    return invalidArgument(fmt::format("cannot create working directory base '{}': {}",
                                       root.string(), error.message()));
  }
  std::string pattern = (root / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return invalidArgument(
        fmt::format("cannot create a working directory under '{}'", root.string()));
  }
  return WorkingDirectory(std::filesystem::path(pattern));
}

WorkingDirectory::~WorkingDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace kiln
