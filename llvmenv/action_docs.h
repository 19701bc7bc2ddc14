// docs/actions.md, generated from the pass table so that it cannot drift:
// every action with its CompilerGym flag and exact pipeline, the CompilerGym
// flags that name no action (and why), and every registry pass left out with
// its reason. `kiln actions --markdown` prints it; a test compares the file.
#pragma once

#include <string>

#include "llvmenv/pass_table.h"

namespace kiln::llvmenv {

std::string actionsMarkdown(const PassTable& table);

}  // namespace kiln::llvmenv
