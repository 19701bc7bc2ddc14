#include "kit/operator_settings.h"

#include <fmt/format.h>

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

Status checkOperatorSettings(const OperatorSettings& settings) {
  KILN_RETURN_IF_ERROR(checkProgram("--mlgo-opt", settings.mlgoOpt));
  KILN_RETURN_IF_ERROR(checkProgram("--mlgo-llc", settings.mlgoLlc));
  KILN_RETURN_IF_ERROR(checkTimeout("--mlgo-decision-timeout-ms", settings.mlgoDecisionTimeout));
  return checkTimeout("--mlgo-compile-timeout-ms", settings.mlgoCompileTimeout);
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

Status aboveCeiling(std::string_view key, std::uint64_t value, std::uint64_t ceiling,
                    std::string_view unit, std::string_view setBy) {
  return permissionDenied(
      fmt::format("{} = {} {} is above this worker's limit of {} {} (set by {}); a client may "
                  "only lower it",
                  key, value, unit, ceiling, unit, setBy));
}

}  // namespace kiln
