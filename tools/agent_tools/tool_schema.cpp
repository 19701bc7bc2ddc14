#include "tools/agent_tools/tool_schema.h"

namespace kiln::agent_tools {

const std::vector<std::string>& toolNames() {
  static const std::vector<std::string> names = {
      kApplyPasses, kObserve, kIrText, kValidate, kCompareBaselines, kForkEpisode, kEndEpisode};
  return names;
}

Result<ToolSpaces> toolSpacesFrom(const client::SessionTypeSpaces&) {
  return internalError("not written yet");
}

nlohmann::json toolSchema(const ToolSpaces&, const ToolLimits&) { return nlohmann::json::array(); }

nlohmann::json resultSchemas(const ToolSpaces&) { return nlohmann::json::object(); }

}  // namespace kiln::agent_tools
