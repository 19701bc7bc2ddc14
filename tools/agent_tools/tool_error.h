// The agent tools' errors: a small closed set of codes a model (or the
// trainer around it) can act on, the one list of them (the executor's, the
// HTTP service's, the schema's error schema and docs/tools.md's table),
// each answered as
//   {"error": {"code": "<name>", "message": "<what was wrong, what to do>"}}.
// kiln's own Status codes map onto them (fromStatus).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln::agent_tools {

enum class ToolError {
  kInvalidJson,         // the arguments are not a JSON object
  kUnknownTool,         // no tool of that name (the message lists them)
  kInvalidArguments,    // a missing, extra or mistyped argument
  kUnknownPass,         // a pass name the action space lacks (the message names close ones)
  kUnknownObservation,  // an observation the tools do not offer
  kTooLarge,            // a module, pass list or IR budget over its limit (the message names it)
  kQuotaExceeded,       // too many calls at once or episodes open: retry later or end some
  kUnknownEpisode,      // not an open episode of this caller
  kInvalidModule,       // the module is not LLVM 19 IR or bitcode, or kiln refuses it
  kCompileFailed,       // a pass broke the module or crashed LLVM: the episode is over
  kUnauthorized,        // the caller is not known (the HTTP service's API keys)
  kUnknownEndpoint,     // a path or method the HTTP service does not serve (404, 405)
  kUnavailable,         // the cluster cannot serve now (no worker, timeout): retry later
  kInternal,            // a bug in kiln
};

inline constexpr std::array kAllToolErrors = {
    ToolError::kInvalidJson,   ToolError::kUnknownTool,        ToolError::kInvalidArguments,
    ToolError::kUnknownPass,   ToolError::kUnknownObservation, ToolError::kTooLarge,
    ToolError::kQuotaExceeded, ToolError::kUnknownEpisode,     ToolError::kInvalidModule,
    ToolError::kCompileFailed, ToolError::kUnauthorized,       ToolError::kUnknownEndpoint,
    ToolError::kUnavailable,   ToolError::kInternal,
};

// "invalid_json", "unknown_tool", ...: the code as the JSON says it.
std::string_view toolErrorName(ToolError error);

// A tool error with its message; what argument checks and the executor return.
struct ToolFailure {
  ToolError error = ToolError::kInternal;
  std::string message;
};

// The JSON text of an error answer.
std::string errorJson(ToolError error, std::string_view message);
std::string errorJson(const ToolFailure& failure);

// A kiln Status from the cluster as a tool error: compile-error ->
// compile_failed, overloaded -> quota_exceeded, timeout/disconnected ->
// unavailable, invalid-argument -> invalid_arguments, internal -> internal.
ToolFailure fromStatus(const Status& status);

}  // namespace kiln::agent_tools
