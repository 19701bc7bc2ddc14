// The bodies of `kiln tools serve`'s requests and answers, apart from HTTP:
//   POST /v1/tools/call   {"name": TOOL, "arguments": {...} or "<JSON text>"}
//                         -> the tool's answer
//   POST /v1/tools/batch  [{"name", "arguments"}, ...] -> [answer, ...] in order
// "arguments" may be an object or the JSON text of one (as OpenAI-style
// tool calls carry it); absent, it is {}. Every error is
//   {"error": {"code": CODE, "message": "..."}}
// with the agent tools' codes (tool_error.h; unknown_endpoint among them).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "tools/agent_tools/tool_executor.h"
#include "tools/tools_service/tool_backend.h"

namespace kiln::tools_service {

std::string errorBody(std::string_view code, std::string_view message);

// A call's body as a ToolCall, or the invalid_json / invalid_arguments
// error answer (as `error`) naming what was wrong.
struct ParsedCalls {
  std::vector<agent_tools::ToolCall> calls;
  std::string error;  // an error body when the request is refused whole
};
ParsedCalls parseCallBody(std::string_view body);
// A batch's body; an element that is not a call makes the whole batch an
// invalid_arguments error naming its index.
ParsedCalls parseBatchBody(std::string_view body);

// The HTTP status of an answer: 200 for a result; for an error, by code
// (unauthorized 401, too_large 413, quota_exceeded 429, unavailable 503,
// internal 500, unknown_endpoint 404, every other 400).
int statusOfAnswer(std::string_view answer);

// Runs `calls` for `caller`, at most `width` at once, the answers in order.
std::vector<std::string> runCalls(ToolBackend& backend, const std::string& caller,
                                  const std::vector<agent_tools::ToolCall>& calls, unsigned width);

// [a, b, ...] of answers that are JSON texts already.
std::string joinAnswers(const std::vector<std::string>& answers);

}  // namespace kiln::tools_service
