#include <kiln/kit/operator_settings.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kiln {

namespace {

Status checkProgram(std::string_view flag, const std::string& program) {
  if (program.empty() || program.size() > 4096 || program.find('\0') != std::string::npos) {
    return invalidArgument(fmt::format("{} must name a program (a path or a name in PATH)", flag));
  }
  return okStatus();
}

Status checkTimeout(std::string_view flag, std::chrono::milliseconds timeout) {
  if (timeout.count() < 1 || timeout.count() > kMaxCompilerTimeoutMs) {
    return invalidArgument(fmt::format("{} must be in [1, {}] milliseconds, got {}", flag,
                                       kMaxCompilerTimeoutMs, timeout.count()));
  }
  return okStatus();
}

}  // namespace

Result<OperatorDataset> parseDatasetFlag(std::string_view value,
                                         const std::filesystem::path& current) {
  const auto equals = value.find('=');
  if (equals == std::string_view::npos) {
    return invalidArgument(
        fmt::format("--dataset '{}': expected NAME=DIR (e.g. --dataset mine=/data/corpus)", value));
  }
  const std::string_view name = value.substr(0, equals);
  const std::string_view directory = value.substr(equals + 1);
  // A name is one segment of benchmark://NAME/...: letters, digits, '-', '_', '.'.
  const bool nameOk =
      !name.empty() && name.size() <= 128 && name != "." && name != ".." &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!nameOk) {
    return invalidArgument(fmt::format(
        "--dataset '{}': the name must be 1-128 letters, digits, '-', '_' or '.'", value));
  }
  if (directory.empty() || directory.find('\0') != std::string_view::npos) {
    return invalidArgument(fmt::format("--dataset '{}': no directory after '='", value));
  }
  std::filesystem::path root(directory);
  if (root.is_relative()) root = current / root;
  return OperatorDataset{std::string(name), root.lexically_normal()};
}

Result<std::vector<OperatorDataset>> parseDatasetList(std::string_view list,
                                                      const std::filesystem::path& current) {
  std::vector<OperatorDataset> out;
  auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  std::size_t at = 0;
  while (at < list.size()) {
    if (blank(list[at])) {
      ++at;
      continue;
    }
    std::size_t end = at;
    while (end < list.size() && !blank(list[end])) ++end;
    auto dataset = parseDatasetFlag(list.substr(at, end - at), current);
    if (!dataset.ok()) {
      return invalidArgument("--datasets (KILN_DATASETS): " + dataset.status().message());
    }
    out.push_back(std::move(*dataset));
    at = end;
  }
  return out;
}

Status checkOperatorSettings(const OperatorSettings& settings) {
  KILN_RETURN_IF_ERROR(checkProgram("--mlgo-opt", settings.mlgoOpt));
  KILN_RETURN_IF_ERROR(checkProgram("--mlgo-llc", settings.mlgoLlc));
  KILN_RETURN_IF_ERROR(checkTimeout("--mlgo-decision-timeout-ms", settings.mlgoDecisionTimeout));
  KILN_RETURN_IF_ERROR(checkTimeout("--mlgo-compile-timeout-ms", settings.mlgoCompileTimeout));
  KILN_RETURN_IF_ERROR(checkProgram("--runtime-linker", settings.runtimeLinker));
  KILN_RETURN_IF_ERROR(sandbox::checkLimits(settings.sandbox));
  if (settings.runtimeMaxRuns < 1 || settings.runtimeMaxRuns > kMaxRuntimeRuns) {
    return invalidArgument(fmt::format("--runtime-max-runs must be in [1, {}], got {}",
                                       kMaxRuntimeRuns, settings.runtimeMaxRuns));
  }
  for (std::size_t i = 0; i < settings.datasets.size(); ++i) {
    const OperatorDataset& dataset = settings.datasets[i];
    for (std::size_t j = 0; j < i; ++j) {
      if (settings.datasets[j].name == dataset.name) {
        return invalidArgument(fmt::format("--dataset: '{}' is named twice", dataset.name));
      }
    }
    std::error_code error;
    if (!std::filesystem::is_directory(dataset.root, error)) {
      return invalidArgument(fmt::format("--dataset {}={}: not a directory{}", dataset.name,
                                         dataset.root.string(),
                                         error ? " (" + error.message() + ")" : ""));
    }
  }
  return okStatus();
}

Status operatorOnly(std::string_view key, std::string_view flag) {
  return permissionDenied(
      fmt::format("'{}' is the operator's to set, not a client's: start the worker (kiln worker, "
                  "nest or local) with {}",
                  key, flag));
}

Status checkFaultInjection(const OperatorSettings& settings, std::string_view key) {
  if (settings.faultInjection) return okStatus();
  return permissionDenied(
      fmt::format("'{}' injects a fault, and this worker was started without "
                  "--enable-fault-injection (only the operator can allow it)",
                  key));
}

}  // namespace kiln
