#include <kiln/kit/service_context.h>

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <system_error>

#include "common/security/file_reader.h"

namespace kiln {

Result<std::shared_ptr<const std::string>> ServiceContext::readClientFile(
    const std::filesystem::path& path) const {
  KILN_ASSIGN_OR_RETURN(std::string bytes,
                        readAllowedFile(fileAccess(), path, maxBenchmarkBytes()));
  return std::make_shared<const std::string>(std::move(bytes));
}

Result<Benchmark> ServiceContext::resolveBenchmark(const std::string& uri) {
  constexpr std::string_view kFileScheme = "file://";
  if (uri.rfind(kFileScheme, 0) == 0) {
    std::filesystem::path path(uri.substr(kFileScheme.size()));
    if (!path.is_absolute()) {
      return invalidArgument(fmt::format("file URI '{}' must hold an absolute path", uri));
    }
    KILN_ASSIGN_OR_RETURN(auto program, readClientFile(path));
    return Benchmark{uri, std::move(program)};
  }
  if (uri.empty()) return invalidArgument("the benchmark URI is empty");
  return Benchmark{uri, nullptr};
}

Result<std::filesystem::path> ServiceContext::makeSessionDirectory(const std::string& prefix) {
  std::string pattern =
      (workingDirectory() / fmt::format("{}-{}-XXXXXX", prefix, ::getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return internalError(
        fmt::format("cannot create a session directory under '{}'", workingDirectory().string()));
  }
  return std::filesystem::path(pattern);
}

std::size_t removeSessionDirectoriesOf(const std::filesystem::path& workingDirectory, int pid) {
  // `<prefix>-<pid>-XXXXXX`: the pid is the second-to-last dash-separated
  // field (a prefix may contain dashes; mkdtemp's suffix has none).
  const std::string marker = fmt::format("-{}-", pid);
  std::size_t removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(workingDirectory, error)) {
    const std::string name = entry.path().filename().string();
    const std::size_t at = name.rfind(marker);
    if (at == std::string::npos || name.size() - at - marker.size() != 6) continue;
    std::error_code ignored;
    if (std::filesystem::remove_all(entry.path(), ignored) > 0) ++removed;
  }
  return removed;
}

}  // namespace kiln
