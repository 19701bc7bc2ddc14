// The agent tools' descriptions in the function-calling format that
// OpenAI-compatible trainers register as they are:
//   [{"type": "function", "function": {"name", "description", "parameters"}}]
// generated from the llvm session type's own spaces (the pass names of its
// default action space, its observation spaces), so that a pass or an
// observation the cluster does not offer is never described. Each tool's
// answer has a JSON schema too (resultSchemas), for trainers and tests that
// check answers. Pure functions: no cluster, no sockets.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/status.h>
#include "tools/agent_tools/tool_limits.h"

namespace kiln::agent_tools {

// The tool names, in the order the schema lists them.
inline constexpr const char* kApplyPasses = "apply_passes";
inline constexpr const char* kObserve = "observe";
inline constexpr const char* kIrText = "ir_text";
inline constexpr const char* kValidate = "validate";
inline constexpr const char* kCompareBaselines = "compare_baselines";
inline constexpr const char* kForkEpisode = "fork_episode";
inline constexpr const char* kEndEpisode = "end_episode";
const std::vector<std::string>& toolNames();

// What the tools take from the llvm type's spaces: the pass names of its
// default action space (as opt-19 -passes= accepts them) and the observation
// spaces the tools offer, in the spaces' order.
struct ToolSpaces {
  Space passes;                     // the named discrete action space
  std::vector<Space> observations;  // offered: counts, Autophase, sizes, IrSha1
  std::vector<std::string> observationNames() const;
};

// The llvm observation spaces the tools offer, when the type has them:
// deterministic values of one state, small enough for a model's context
// (the IR text has its own tool, with a budget).
const std::vector<std::string>& offeredObservations();

// From the llvm session type's spaces; invalid-argument when they are not
// the llvm type's (no named discrete action space, no IrInstructionCount).
Result<ToolSpaces> toolSpacesFrom(const client::SessionTypeSpaces& llvm);

// The tool list, in the function-calling format.
nlohmann::json toolSchema(const ToolSpaces& spaces, const ToolLimits& limits);

// {tool name: JSON schema (Draft 2020-12) of its answer}; the error answer
// is under "error".
nlohmann::json resultSchemas(const ToolSpaces& spaces);

// The JSON schema of a value of `space` as valueJson writes it.
nlohmann::json valueSchema(const Space& space);
// An observation's value as JSON: numbers, arrays of numbers (a tensor's
// values, row-major), objects (a dict), strings; bytes as base64.
nlohmann::json valueJson(const Value& value);

}  // namespace kiln::agent_tools
