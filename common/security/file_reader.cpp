#include "common/security/file_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <system_error>
#include <utility>

#include "common/base/unique_fd.h"

namespace kiln {

namespace {

// Never blocks on a FIFO, never makes a terminal ours.
constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
constexpr int kMaxSymlinks = 40;  // the kernel's own bound (MAXSYMLINKS)
constexpr int kMaxAttempts = 8;

// A descriptor open for reading, or the errno that says why there is none
// (EXDEV: resolving the path would leave the root).
struct Opened {
  UniqueFd fd;
  int error = 0;
};

Opened openWithKernel(int rootFd, const std::filesystem::path& relative) {
  open_how how{};
  how.flags = kReadFlags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 1;; ++attempt) {
    long fd = ::syscall(SYS_openat2, rootFd, relative.c_str(), &how, sizeof(how));
    if (fd >= 0) return {UniqueFd(static_cast<int>(fd)), 0};
    // EAGAIN: a rename raced with a '..' and the kernel could not be sure it
    // stayed inside; it asks the caller to try again.
    if ((errno == EAGAIN || errno == EINTR) && attempt < kMaxAttempts) continue;
    return {UniqueFd(), errno};
  }
}

std::deque<std::string> splitComponents(const std::string& path) {
  std::deque<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = end + 1;
  }
  return parts;
}

// The same rule as RESOLVE_BENEATH without openat2: every component is
// opened relative to the directory before it with O_NOFOLLOW, so the kernel
// never follows a link; a link's target is read and walked here instead,
// and '..' returns to a directory this walk entered, never above the root.
Opened openByWalking(int rootFd, const std::filesystem::path& relative) {
  std::vector<UniqueFd> entered;  // directories below the root, innermost last
  auto current = [&] { return entered.empty() ? rootFd : entered.back().get(); };
  std::deque<std::string> pending = splitComponents(relative.string());
  int links = 0;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (name == "..") {
      if (entered.empty()) return {UniqueFd(), EXDEV};
      entered.pop_back();
      continue;
    }
    const bool last = pending.empty();
    const int flags = (last ? kReadFlags : O_PATH | O_DIRECTORY | O_CLOEXEC) | O_NOFOLLOW;
    int fd = ::openat(current(), name.c_str(), flags);
    if (fd >= 0) {
      if (last) return {UniqueFd(fd), 0};
      entered.emplace_back(fd);
      continue;
    }
    // O_NOFOLLOW on a link: ELOOP for the last component, ENOTDIR (with
    // O_DIRECTORY) before it. Anything that is not a link keeps that error.
    const int error = errno;
    if (error != ELOOP && error != ENOTDIR) return {UniqueFd(), error};
    std::string target(PATH_MAX, '\0');
    ssize_t length = ::readlinkat(current(), name.c_str(), target.data(), target.size());
    if (length < 0) return {UniqueFd(), error};
    if (static_cast<std::size_t>(length) >= target.size()) return {UniqueFd(), ENAMETOOLONG};
    if (++links > kMaxSymlinks) return {UniqueFd(), ELOOP};
    target.resize(static_cast<std::size_t>(length));
    // Like RESOLVE_BENEATH: an absolute link leaves the root, wherever it points.
    if (target.starts_with('/')) return {UniqueFd(), EXDEV};
    std::deque<std::string> parts = splitComponents(target);
    pending.insert(pending.begin(), parts.begin(), parts.end());
  }
  // The path ended on a directory ("", "." or ".."): open it, for the
  // regular-file check to refuse.
  int fd = ::openat(current(), ".", kReadFlags);
  if (fd < 0) return {UniqueFd(), errno};
  return {UniqueFd(fd), 0};
}

Status openError(const std::filesystem::path& root, const std::filesystem::path& shown, int error) {
  switch (error) {
    case EXDEV:
      return permissionDenied(fmt::format(
          "'{}' leads out of the allowed directory '{}' (through '..' or a symlink that is "
          "absolute or points outside it); only files below the directories allowed with "
          "--allow-files DIR may be read",
          shown.string(), root.string()));
    case ENOENT:
    case ENOTDIR:
      return notFound(fmt::format("file '{}' does not exist", shown.string()));
    case EACCES:
    case EPERM:
      return permissionDenied(
          fmt::format("cannot open '{}': {} (the server's user may not read it)", shown.string(),
                      std::strerror(error)));
    case ELOOP:
      return invalidArgument(
          fmt::format("cannot open '{}': too many levels of symbolic links", shown.string()));
    default:
      return invalidArgument(
          fmt::format("cannot open '{}': {}", shown.string(), std::strerror(error)));
  }
}

}  // namespace

Result<std::string> readBoundedDescriptor(int fd, const std::string& name, std::uint64_t maxBytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return invalidArgument(fmt::format("cannot examine '{}': {}", name, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return invalidArgument(fmt::format("'{}' is not a regular file", name));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > maxBytes) {
    return invalidArgument(fmt::format(
        "'{}' is {} bytes, over the benchmark size limit of {} bytes", name, size, maxBytes));
  }
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return permissionDenied(fmt::format("cannot read '{}': {}", name, std::strerror(errno)));
    }
    if (got == 0) break;  // shrank while reading: return what is there
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  // A file that grew past its fstat size is still held to the limit.
  char extra;
  if (::read(fd, &extra, 1) > 0) {
    return invalidArgument(
        fmt::format("'{}' grew while being read; refusing a moving target", name));
  }
  return bytes;
}

Result<std::string> readFileBeneath(const std::filesystem::path& root,
                                    const std::filesystem::path& relative, std::uint64_t maxBytes,
                                    BeneathResolver resolver) {
  const std::filesystem::path shown = (root / relative).lexically_normal();
  if (relative.is_absolute()) return openError(root, shown, EXDEV);
  UniqueFd rootFd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (rootFd.get() < 0) return openError(root, shown, errno);
  Opened opened;
  if (resolver == BeneathResolver::kKernel) {
    opened = openWithKernel(rootFd.get(), relative);
  }
  // ENOSYS: a kernel without openat2. EPERM: a container whose seccomp
  // filter refuses syscalls it does not know with EPERM rather than ENOSYS
  // (openat2 itself reports a file's permissions as EACCES). The walk
  // applies the same rule with plain openat.
  if (resolver == BeneathResolver::kPortable || opened.error == ENOSYS || opened.error == EPERM) {
    opened = openByWalking(rootFd.get(), relative);
  }
  if (opened.fd.get() < 0) return openError(root, shown, opened.error);
  return readBoundedDescriptor(opened.fd.get(), shown.string(), maxBytes);
}

Result<std::string> readAllowedFile(const FileAccess& access,
                                    const std::filesystem::path& requested, std::uint64_t maxBytes,
                                    BeneathResolver resolver) {
  KILN_ASSIGN_OR_RETURN(AllowedFile file, checkFileRequest(access, requested));
  return readFileBeneath(file.root, file.relative, maxBytes, resolver);
}

Result<FileAccess> resolveFileAccess(
    const std::optional<std::vector<std::filesystem::path>>& allowed,
    const std::vector<std::string>& endpoints) {
  FileAccess access;
  std::error_code error;
  if (!allowed) {
    const std::filesystem::path current = std::filesystem::current_path(error);
    // A current directory that is gone allows nothing rather than failing the start.
    if (error) return access;
    access.roots = defaultFileRoots(endpoints, current);
  } else {
    access.roots = *allowed;
  }
  std::vector<std::filesystem::path> aliases;
  for (const std::filesystem::path& root : access.roots) {
    if (!std::filesystem::is_directory(root, error)) {
      return invalidArgument(
          fmt::format("--allow-files '{}': not a directory this process can see", root.string()));
    }
    std::filesystem::path real = std::filesystem::canonical(root, error);
    if (!error && real != root) aliases.push_back(std::move(real));
  }
  // Once each, in the operator's order.
  std::vector<std::filesystem::path> unique;
  for (std::filesystem::path& root : access.roots) {
    if (std::find(unique.begin(), unique.end(), root) == unique.end()) unique.push_back(root);
  }
  for (std::filesystem::path& alias : aliases) {
    if (std::find(unique.begin(), unique.end(), alias) == unique.end()) unique.push_back(alias);
  }
  access.roots = std::move(unique);
  return access;
}

}  // namespace kiln
