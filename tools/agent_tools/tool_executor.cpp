#include "tools/agent_tools/tool_executor.h"

#include "tools/agent_tools/tool_error.h"

namespace kiln::agent_tools {

struct ToolExecutor::State {
  ToolLimits limits;
};

ToolExecutor::ToolExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}
ToolExecutor::~ToolExecutor() = default;

Result<std::unique_ptr<ToolExecutor>> ToolExecutor::create(ExecutorOptions options) {
  auto state = std::make_unique<State>();
  state->limits = options.limits;
  return std::unique_ptr<ToolExecutor>(new ToolExecutor(std::move(state)));
}

std::string ToolExecutor::call(const CallerId&, std::string_view, std::string_view) {
  return errorJson(ToolError::kInternal, "not written yet");
}

std::vector<std::string> ToolExecutor::callBatch(const CallerId& caller,
                                                 const std::vector<ToolCall>& calls) {
  std::vector<std::string> answers;
  for (const ToolCall& c : calls) answers.push_back(call(caller, c.tool, c.arguments));
  return answers;
}

std::string ToolExecutor::schemaJson(bool) const { return "[]"; }
const ToolLimits& ToolExecutor::limits() const { return state_->limits; }
ExecutorStats ToolExecutor::stats() const { return {}; }
void ToolExecutor::forgetCaller(const CallerId&) {}

}  // namespace kiln::agent_tools
