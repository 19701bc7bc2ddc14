// What `kiln tools serve` calls for a request: the agent tools' executor
// (tools/agent_tools/tool_executor.h) in kiln, a fake in the service's own
// tests. Answers are JSON text, errors included (tool_error.h's shape).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace kiln::agent_tools {
class ToolExecutor;
}

namespace kiln::tools_service {

class ToolBackend {
 public:
  virtual ~ToolBackend() = default;
  // The tool list in the function-calling format; with `results`, the
  // answers' JSON schemas instead.
  virtual std::string schemaJson(bool results) const = 0;
  // One call of `caller`; must be safe from many threads at once.
  virtual std::string call(const std::string& caller, std::string_view tool,
                           std::string_view argumentsJson) = 0;
};

// The executor as a backend; `executor` must outlive it.
std::unique_ptr<ToolBackend> executorBackend(agent_tools::ToolExecutor& executor);

}  // namespace kiln::tools_service
