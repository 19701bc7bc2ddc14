// A small llvm-like set of spaces for the agent tools' pure tests: a few
// pass names (with CompilerGym flags as aliases) and the counts.
#pragma once

#include <kiln/client/client.h>
#include "tools/agent_tools/tool_schema.h"

namespace kiln::agent_tools {

inline client::SessionTypeSpaces fakeLlvmSpaces() {
  client::SessionTypeSpaces spaces;
  Space passes = Space::namedDiscrete(
      "PassesAll", {"instcombine", "gvn", "mem2reg", "sroa", "simplifycfg", "loop-unroll"});
  passes.aliases = {"-instcombine", "-gvn", "-mem2reg", "-sroa", "-simplifycfg", "-loop-unroll"};
  spaces.actionSpaces = {passes};
  spaces.observationSpaces = {
      Space::string("Ir"),
      Space::int64Scalar("IrInstructionCount", {0, std::nullopt}),
      Space::int64Scalar("IrInstructionCountOz", {0, std::nullopt}),
      Space::int64Box("Autophase", {56}, {0, std::nullopt}),
      Space::doubleScalar("Reward:IrInstructionCount", {}),
  };
  return spaces;
}

inline ToolSpaces fakeToolSpaces() {
  auto spaces = toolSpacesFrom(fakeLlvmSpaces());
  return std::move(spaces).value();
}

}  // namespace kiln::agent_tools
