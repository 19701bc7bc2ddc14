// A private directory for one process, created on start and removed with all
// its contents when the owner goes away, so a worker leaves nothing behind.
// An owner that dies without running its destructor (SIGKILL, OOM) cannot
// remove it; so each owner holds an flock on `<name>.owner` beside its
// directory for its whole life (the kernel drops it when the process dies),
// and creating a directory first removes those of the same prefix whose lock
// nobody holds any more.
#pragma once

#include <filesystem>

#include <kiln/status.h>

namespace kiln {

class WorkingDirectory {
 public:
  // Creates `<base>/<prefix>-XXXXXX`; base defaults to the system temp dir.
  // Abandoned directories `<base>/<prefix>-*` of dead owners are removed first.
  static Result<WorkingDirectory> create(const std::filesystem::path& base,
                                         const std::string& prefix);
  WorkingDirectory(WorkingDirectory&& other) noexcept
      : path_(std::move(other.path_)), lockFd_(other.lockFd_) {
    other.path_.clear();
    other.lockFd_ = -1;
  }
  WorkingDirectory& operator=(WorkingDirectory&&) = delete;
  WorkingDirectory(const WorkingDirectory&) = delete;
  ~WorkingDirectory();

  const std::filesystem::path& path() const { return path_; }

 private:
  WorkingDirectory(std::filesystem::path path, int lockFd)
      : path_(std::move(path)), lockFd_(lockFd) {}
  std::filesystem::path path_;
  int lockFd_ = -1;  // flock held on `<path>.owner` while we live
};

// Removes a WorkingDirectory's directory and owner file without its
// object, for a process that must _exit() at once (common/process/signals.h): a
// best effort while other threads may still write there.
void removeWorkingDirectoryNow(const std::filesystem::path& directory);

}  // namespace kiln
