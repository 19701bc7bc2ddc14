// CompilerGym's llvm-v0 action flags (LLVM 10's legacy pass manager) and the
// kiln action each one names on LLVM 19, so that a CompilerGym user's
// `-gvn` or `-functionattrs` still means the same pass. Pure data; the pass
// table (pass_table.h) takes each action's flag from here.
#pragma once

#include <span>
#include <string_view>

namespace kiln::llvm_engine {

struct CompilerGymFlag {
  std::string_view flag;    // as CompilerGym wrote it, e.g. "-functionattrs"
  std::string_view action;  // the LLVM 19 pass name, e.g. "function-attrs"; "" = none
  std::string_view note;    // for "" actions: why LLVM 19 has no counterpart
};

// Every flag of CompilerGym's llvm-v0 action space, in its order.
std::span<const CompilerGymFlag> compilerGymFlags();

// The CompilerGym flag of the action called `action`, or "" if it had none.
std::string_view compilerGymFlagOf(std::string_view action);

}  // namespace kiln::llvm_engine
