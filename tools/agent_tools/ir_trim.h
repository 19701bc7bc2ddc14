// LLVM IR text cut to a byte budget for a model's context, with what was
// cut said (policy: pure). The module's header (target, types, globals,
// declarations) comes first, then whole function definitions in module
// order while they fit; a function that does not fit is left out whole
// (never cut mid-body, which would read as broken IR), and the attributes
// and metadata at the end come last.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::agent_tools {

struct TrimmedIr {
  std::string text;
  std::uint64_t bytesShown = 0;
  std::uint64_t bytesTotal = 0;
  bool trimmed = false;
  std::vector<std::string> functionsCut;  // "@name" of each definition left out
  std::string note;                       // one sentence: what was shown and cut
};

TrimmedIr trimIr(std::string_view ir, std::uint64_t maxBytes);

}  // namespace kiln::agent_tools
