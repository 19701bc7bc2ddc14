#include <kiln/file_access.h>

#include <fmt/format.h>

#include <algorithm>

#include "common/transport/listen_exposure.h"

namespace kiln {

namespace {

// The path's components without empty and "." ones; '..' is kept for the
// caller to refuse, since resolving it lexically would disagree with the
// file system wherever a symlink precedes it.
std::vector<std::string> components(const std::filesystem::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : path.relative_path()) {
    std::string text = part.string();
    if (text.empty() || text == ".") continue;
    parts.push_back(std::move(text));
  }
  return parts;
}

bool startsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

Status outsideRoots(const std::filesystem::path& requested, const std::string& why) {
  return permissionDenied(fmt::format(
      "'{}' {}: this server reads only files below the directories its operator allowed with "
      "--allow-files DIR",
      requested.string(), why));
}

}  // namespace

Result<AllowedFile> checkFileRequest(const FileAccess& access,
                                     const std::filesystem::path& requested) {
  if (!requested.is_absolute()) {
    return invalidArgument(fmt::format("file path '{}' must be absolute", requested.string()));
  }
  std::vector<std::string> parts = components(requested);
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    return outsideRoots(requested, "has a '..' component");
  }
  const std::filesystem::path* best = nullptr;
  std::size_t bestDepth = 0;
  for (const std::filesystem::path& root : access.roots) {
    std::vector<std::string> rootParts = components(root);
    if (!startsWith(parts, rootParts)) continue;
    // The outermost root: a relative symlink may then use all of it.
    if (best == nullptr || rootParts.size() < bestDepth) {
      best = &root;
      bestDepth = rootParts.size();
    }
  }
  if (best == nullptr) {
    return outsideRoots(requested, access.roots.empty() ? "cannot be read (no directory is allowed)"
                                                        : "is outside every allowed directory");
  }
  std::filesystem::path relative;
  for (std::size_t i = bestDepth; i < parts.size(); ++i) relative /= parts[i];
  if (relative.empty()) relative = ".";
  return AllowedFile{*best, std::move(relative)};
}

Result<std::optional<std::vector<std::filesystem::path>>> parseAllowFiles(
    const std::vector<std::string>& values, const std::filesystem::path& currentDirectory) {
  if (values.empty()) return std::optional<std::vector<std::filesystem::path>>();
  std::vector<std::filesystem::path> roots;
  for (const std::string& value : values) {
    if (value == kAllowNoFiles) {
      if (values.size() != 1) {
        return invalidArgument(fmt::format(
            "--allow-files {} means no directory, so it cannot stand beside others (write "
            "./{} for a directory of that name)",
            kAllowNoFiles, kAllowNoFiles));
      }
      return std::optional<std::vector<std::filesystem::path>>(std::in_place);
    }
    if (value.empty()) return invalidArgument("--allow-files needs a directory, not ''");
    std::filesystem::path root(value);
    if (!root.is_absolute()) root = currentDirectory / root;
    root = root.lexically_normal();
    // "/a/b/" normalizes to "/a/b/"; roots compare by components anyway, but
    // the log reads better without it.
    if (root.has_relative_path() && !root.has_filename()) root = root.parent_path();
    roots.push_back(std::move(root));
  }
  return std::optional<std::vector<std::filesystem::path>>(std::move(roots));
}

std::vector<std::filesystem::path> defaultFileRoots(const std::vector<std::string>& endpoints,
                                                    const std::filesystem::path& currentDirectory) {
  bool local = std::all_of(endpoints.begin(), endpoints.end(), isLoopbackEndpoint);
  if (!local) return {};
  return {currentDirectory.lexically_normal()};
}

std::string describeFileAccess(const FileAccess& access) {
  if (access.roots.empty()) {
    return "reads no client-named files (file:// benchmarks are refused; --allow-files DIR "
           "allows a directory)";
  }
  std::vector<std::string> roots;
  for (const auto& root : access.roots) roots.push_back(root.string());
  return fmt::format("reads client-named files (file:// benchmarks) only below {}",
                     fmt::join(roots, ", "));
}

}  // namespace kiln
