// A private directory for one process, created on start and removed with all
// its contents when the owner goes away, so a worker leaves nothing behind.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace kiln {

class WorkingDirectory {
 public:
  // Creates `<base>/<prefix>-XXXXXX`; base defaults to the system temp dir.
  static Result<WorkingDirectory> create(const std::filesystem::path& base,
                                         const std::string& prefix);
  WorkingDirectory(WorkingDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  WorkingDirectory& operator=(WorkingDirectory&&) = delete;
  WorkingDirectory(const WorkingDirectory&) = delete;
  ~WorkingDirectory();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit WorkingDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace kiln
