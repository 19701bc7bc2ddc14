#include "common/process/working_directory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

namespace kiln {

namespace {

constexpr std::string_view kOwnerSuffix = ".owner";

std::filesystem::path ownerFile(const std::filesystem::path& directory) {
  return directory.string() + std::string(kOwnerSuffix);
}

// Removes `<root>/<prefix>-*` directories whose owner lock is free (their
// owner died). Directories without an owner file (another program's, or an
// older kiln's) are left alone.
void removeAbandoned(const std::filesystem::path& root, const std::string& prefix) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix + "-", 0) != 0 || !name.ends_with(kOwnerSuffix)) continue;
    int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code ignored;
      std::filesystem::path directory = entry.path();
      directory.replace_extension();
      std::filesystem::remove_all(directory, ignored);
      std::filesystem::remove(entry.path(), ignored);
    }
    ::close(fd);
  }
}

// Takes the owner lock under a staging name that no reclaimer looks at, then
// renames it into place: a lock file with the final name is always held by a
// live owner (or by nobody, once that owner died).
Result<std::pair<std::filesystem::path, int>> claimName(const std::filesystem::path& root,
                                                        const std::string& prefix) {
  std::string staging = (root / ("." + prefix + "-XXXXXX" + std::string(kOwnerSuffix))).string();
  int fd = ::mkostemps(staging.data(), static_cast<int>(kOwnerSuffix.size()), O_CLOEXEC);
  if (fd < 0) {
    return invalidArgument(
        fmt::format("cannot create a working directory's owner file under '{}'", root.string()));
  }
  ::flock(fd, LOCK_EX);  // uncontended: nobody else knows this name
  std::filesystem::path stagingPath(staging);
  std::filesystem::path lock = root / stagingPath.filename().string().substr(1);
  if (::renameat2(AT_FDCWD, stagingPath.c_str(), AT_FDCWD, lock.c_str(), RENAME_NOREPLACE) != 0) {
    ::unlink(stagingPath.c_str());
    ::close(fd);
    return internalError(fmt::format("cannot claim '{}'", lock.string()));
  }
  std::filesystem::path directory = lock;
  directory.replace_extension();
  return std::make_pair(directory, fd);
}

}  // namespace

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
  removeAbandoned(root, prefix);
  // A name may be taken by a directory without owner file: try a few.
  for (int attempt = 0; attempt < 8; ++attempt) {
    KILN_ASSIGN_OR_RETURN(auto claimed, claimName(root, prefix));
    if (::mkdir(claimed.first.c_str(), 0700) == 0) {
      return WorkingDirectory(claimed.first, claimed.second);
    }
    ::unlink(ownerFile(claimed.first).c_str());
    ::close(claimed.second);
  }
  return invalidArgument(
      fmt::format("cannot create a working directory under '{}'", root.string()));
}

void removeWorkingDirectoryNow(const std::filesystem::path& directory) {
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
  std::filesystem::remove(ownerFile(directory), ignored);
}

WorkingDirectory::~WorkingDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  std::filesystem::remove(ownerFile(path_), ignored);
  if (lockFd_ >= 0) ::close(lockFd_);
}

}  // namespace kiln
