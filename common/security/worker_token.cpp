#include "common/security/worker_token.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <system_error>

#include <kiln/curve_keys.h>

namespace kiln {

std::filesystem::path defaultWorkerTokenFile() {
  if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && *config != '\0') {
    return std::filesystem::path(config) / "kiln" / "worker-token";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::filesystem::path(home) / ".config" / "kiln" / "worker-token";
  }
  return {};
}

Result<Secret> loadWorkerToken(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(
      std::string text,
      readOwnersFile(path, "worker token file", "the token that registers workers",
                     "(or delete it: the coordinator writes a new one, and every worker then "
                     "needs the new file)"));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  auto token = Secret::fromHex(text);
  if (!token.ok()) {
    return invalidArgument(fmt::format(
        "worker token file '{}' must hold one line of {} hexadecimal digits (the coordinator "
        "writes such a file where none exists)",
        path.string(), 2 * kSecretBytes));
  }
  return token;
}

Result<Secret> loadOrCreateWorkerToken(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::exists(path, error)) return loadWorkerToken(path);
  if (path.has_parent_path() && !std::filesystem::exists(path.parent_path(), error)) {
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) {
      return invalidArgument(
          fmt::format("cannot create the directory of worker token file '{}': {}", path.string(),
                      error.message()));
    }
    ::chmod(path.parent_path().c_str(), 0700);
  }
  const Secret token = Secret::draw();
  Status written = writeOwnersFile(path, token.hex() + "\n", false);
  // Another process wrote it first: theirs is the cluster's.
  if (!written.ok() && std::filesystem::exists(path, error)) return loadWorkerToken(path);
  if (!written.ok()) return written;
  return token;
}

Result<WorkerToken> coordinatorWorkerToken(const std::string& flag, bool keyed) {
  if (flag.empty() && keyed) return WorkerToken{};
  std::filesystem::path file =
      flag.empty() ? defaultWorkerTokenFile() : std::filesystem::path(flag);
  if (file.empty()) {
    return invalidArgument(
        "a coordinator without a key needs a worker token file, and neither HOME nor "
        "XDG_CONFIG_HOME names a default: pass --worker-token-file FILE");
  }
  KILN_ASSIGN_OR_RETURN(Secret token, loadOrCreateWorkerToken(file));
  return WorkerToken{token, file};
}

Result<WorkerToken> presentedWorkerToken(const std::string& flag) {
  if (!flag.empty()) {
    KILN_ASSIGN_OR_RETURN(Secret token, loadWorkerToken(flag));
    return WorkerToken{token, flag};
  }
  std::filesystem::path file = defaultWorkerTokenFile();
  std::error_code error;
  if (file.empty() || !std::filesystem::exists(file, error)) return WorkerToken{};
  KILN_ASSIGN_OR_RETURN(Secret token, loadWorkerToken(file));
  return WorkerToken{token, file};
}

}  // namespace kiln
