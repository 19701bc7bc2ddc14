// kiln._kiln's binding of tools/agent_tools (kiln.tools wraps it): a
// ToolExecutor whose calls run without the GIL, so that a trainer's rollout
// threads (and asyncio's executor threads) compile at once.
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::python {

void bindAgentTools(pybind11::module_& m);

}  // namespace kiln::python
