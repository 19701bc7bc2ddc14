// A module's shape: how many of each opcode, blocks, functions, globals,
// aliases, ifuncs and named metadata it has. Every one of these is visible in
// the module's text, so two modules of different shapes print differently:
// a cheap, exact proof that a pass changed the text, without printing it.
// (Equal shapes prove nothing.)
#pragma once

#include <cstdint>
#include <vector>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

using ModuleShape = std::vector<std::int64_t>;

ModuleShape moduleShape(const llvm::Module& module);

}  // namespace kiln::llvm_engine
