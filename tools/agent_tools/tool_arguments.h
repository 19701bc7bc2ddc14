// The agent tools' argument rules (policy): a call's JSON arguments checked
// against the tool's schema (tool_schema.h) and the caller's limits, and
// turned into a ToolRequest the executor runs. Pure: no cluster. Every
// refusal is a ToolFailure whose message names the argument that was wrong
// and, for a pass, the names close to it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tools/agent_tools/tool_error.h"
#include "tools/agent_tools/tool_limits.h"
#include "tools/agent_tools/tool_schema.h"

namespace kiln::agent_tools {

// The state a call acts on: an open episode, or a benchmark (a URI, or the
// caller's module under a URI of its content) after `passes`.
struct StateRef {
  std::string episode;                // empty: a benchmark's state
  std::string benchmark;              // URI; for a module, benchmark://user-v0/module-<hash>
  std::optional<std::string> module;  // the module's bytes (IR text or bitcode)
  std::vector<std::int64_t> passes;   // indices into the pass space
};

struct ToolRequest {
  std::string tool;  // one of toolNames()
  StateRef state;
  std::vector<std::string> observe;  // observation space names
  bool keepEpisode = false;          // apply_passes: keep the result as an episode
  std::uint64_t maxBytes = 0;        // ir_text
};

using ParsedCall = std::variant<ToolRequest, ToolFailure>;

ParsedCall parseCall(std::string_view tool, std::string_view argumentsJson,
                     const ToolSpaces& spaces, const ToolLimits& limits);

// Whether `bytes` are LLVM bitcode (raw or in its wrapper), by their magic.
bool isBitcode(std::string_view bytes);

}  // namespace kiln::agent_tools
