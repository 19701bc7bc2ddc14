#include "tools/tools_service/tool_backend.h"

#include "tools/agent_tools/tool_executor.h"

namespace kiln::tools_service {

namespace {

class ExecutorBackend final : public ToolBackend {
 public:
  explicit ExecutorBackend(agent_tools::ToolExecutor& executor) : executor_(executor) {}
  std::string schemaJson(bool results) const override { return executor_.schemaJson(results); }
  std::string call(const std::string& caller, std::string_view tool,
                   std::string_view argumentsJson) override {
    return executor_.call(caller, tool, argumentsJson);
  }

 private:
  agent_tools::ToolExecutor& executor_;
};

}  // namespace

std::unique_ptr<ToolBackend> executorBackend(agent_tools::ToolExecutor& executor) {
  return std::make_unique<ExecutorBackend>(executor);
}

}  // namespace kiln::tools_service
