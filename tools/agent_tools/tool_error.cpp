#include "tools/agent_tools/tool_error.h"

#include <nlohmann/json.hpp>

namespace kiln::agent_tools {

std::string_view toolErrorName(ToolError error) {
  switch (error) {
    case ToolError::kInvalidJson:
      return "invalid_json";
    case ToolError::kUnknownTool:
      return "unknown_tool";
    case ToolError::kInvalidArguments:
      return "invalid_arguments";
    case ToolError::kUnknownPass:
      return "unknown_pass";
    case ToolError::kUnknownObservation:
      return "unknown_observation";
    case ToolError::kTooLarge:
      return "too_large";
    case ToolError::kQuotaExceeded:
      return "quota_exceeded";
    case ToolError::kUnknownEpisode:
      return "unknown_episode";
    case ToolError::kInvalidModule:
      return "invalid_module";
    case ToolError::kCompileFailed:
      return "compile_failed";
    case ToolError::kUnauthorized:
      return "unauthorized";
    case ToolError::kUnknownEndpoint:
      return "unknown_endpoint";
    case ToolError::kUnavailable:
      return "unavailable";
    case ToolError::kInternal:
      return "internal";
  }
  return "internal";
}

std::string errorJson(ToolError error, std::string_view message) {
  nlohmann::json answer = {
      {"error", {{"code", toolErrorName(error)}, {"message", std::string(message)}}}};
  // Messages quote what a caller sent, which may not be UTF-8: replace, never throw.
  return answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string errorJson(const ToolFailure& failure) {
  return errorJson(failure.error, failure.message);
}

ToolFailure fromStatus(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kCompileError:
      return {ToolError::kCompileFailed, status.message()};
    case ErrorCode::kOverloaded:
      return {ToolError::kQuotaExceeded, status.message()};
    case ErrorCode::kTimeout:
    case ErrorCode::kDisconnected:
      return {ToolError::kUnavailable, status.message()};
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kPermissionDenied:
      return {ToolError::kInvalidArguments, status.message()};
    default:
      return {ToolError::kInternal, status.toString()};
  }
}

}  // namespace kiln::agent_tools
