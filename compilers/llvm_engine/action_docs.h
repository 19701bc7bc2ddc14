// docs/actions.md, generated from the pass table so that it cannot drift:
// both action spaces (single passes; then pipelines), every action with its
// CompilerGym flag and exact `-passes=` text, why an action runs other text
// than its name, the CompilerGym flags that name no action (and why), and
// every registry pass left out with its reason. `kiln actions --markdown`
// prints it; a test compares the file.
#pragma once

#include <string>

#include "compilers/llvm_engine/pass_table.h"

namespace kiln::llvm_engine {

std::string actionsMarkdown(const PassTable& table);

}  // namespace kiln::llvm_engine
