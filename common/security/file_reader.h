// Reading a file below a root directory so that nothing leaves the root: the
// kernel resolves the path with openat2(RESOLVE_BENEATH) relative to a
// descriptor of the root, so a '..' or a symlink that points out of it (any
// absolute symlink, too) is refused however the tree changes meanwhile.
// Relative symlinks that stay inside are followed. On a kernel without
// openat2 (ENOSYS) the same rule is kept by a walk that opens one component
// at a time with O_NOFOLLOW and resolves each link itself. The policy of
// which roots a request may use is common/file_access.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/file_access.h>
#include <kiln/status.h>

namespace kiln {

enum class BeneathResolver : std::uint8_t {
  kKernel,    // openat2 with RESOLVE_BENEATH; the walk where the kernel lacks it
  kPortable,  // always the walk (tests cover both with it)
};

// The whole regular file `relative` below `root`, if at most `maxBytes` long.
// permission-denied (naming --allow-files) when resolving it leaves the root;
// not-found when it does not exist; invalid-argument when it is not a
// regular file, too big, or has too many levels of symlinks. Opening never
// blocks (FIFOs) and the checks apply to the descriptor actually read.
Result<std::string> readFileBeneath(const std::filesystem::path& root,
                                    const std::filesystem::path& relative, std::uint64_t maxBytes,
                                    BeneathResolver resolver = BeneathResolver::kKernel);

// checkFileRequest, then readFileBeneath: what a server reads when a client
// names `requested`.
Result<std::string> readAllowedFile(const FileAccess& access,
                                    const std::filesystem::path& requested, std::uint64_t maxBytes,
                                    BeneathResolver resolver = BeneathResolver::kKernel);

// The whole regular file open on `fd` (not closed here), at most `maxBytes`
// long; `name` is for messages. invalid-argument for other kinds of file, a
// file over the limit or one that grows while being read.
Result<std::string> readBoundedDescriptor(int fd, const std::string& name, std::uint64_t maxBytes);

// The roots a server starts with: `allowed` (parseAllowFiles) or, when it is
// nullopt, defaultFileRoots(endpoints, the current directory). Each must be
// a directory (invalid-argument otherwise); one reached through a symlink
// is allowed under its real path too, so clients may name either.
Result<FileAccess> resolveFileAccess(
    const std::optional<std::vector<std::filesystem::path>>& allowed,
    const std::vector<std::string>& endpoints);

}  // namespace kiln
