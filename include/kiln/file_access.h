// Which files a server may read when a client names them (file:// benchmarks):
// only files below the directories the operator allowed with --allow-files.
// This is the policy, pure and lexical; common/security/file_reader.h is the mechanism
// that opens a file below a root without letting a symlink or '..' leave it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln {

// The word an operator passes as `--allow-files none` to allow nothing.
inline constexpr const char* kAllowNoFiles = "none";

// The directories below which client-named files may be read: absolute and
// lexically normal. Empty = no file may be read.
struct FileAccess {
  std::vector<std::filesystem::path> roots;
};

// A request the policy allows: the root it falls under and the path below it
// ("." for the root itself).
struct AllowedFile {
  std::filesystem::path root;
  std::filesystem::path relative;
};

// The outermost root that holds `requested`. Looks at no file, so that the
// answer says nothing about what exists outside the roots. invalid-argument
// when `requested` is not absolute; permission-denied (naming --allow-files)
// when it holds a '..' component or falls under no root.
Result<AllowedFile> checkFileRequest(const FileAccess& access,
                                     const std::filesystem::path& requested);

// The operator's --allow-files values as absolute, normal paths (relative
// ones taken from `currentDirectory`). nullopt when none were given (the
// default applies); an empty list for `none`. invalid-argument for `none`
// beside a directory, or an empty value.
Result<std::optional<std::vector<std::filesystem::path>>> parseAllowFiles(
    const std::vector<std::string>& values, const std::filesystem::path& currentDirectory);

// The roots of a server whose operator gave no --allow-files: the current
// directory when every endpoint that takes requests (listened on or
// advertised) stays on this host (loopback, ipc://, inproc://), else none.
std::vector<std::filesystem::path> defaultFileRoots(const std::vector<std::string>& endpoints,
                                                    const std::filesystem::path& currentDirectory);

// One line for the start-up log: what may be read, and how to change it.
std::string describeFileAccess(const FileAccess& access);

}  // namespace kiln
