// CompilerGym's InstCount observation: total instructions, blocks and
// functions followed by one count per LLVM opcode, in the order of LLVM's
// Instruction.def (70 values for LLVM 19). Deterministic, platform independent.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

// "TotalInstsCount", "TotalBlocksCount", "TotalFuncsCount", "RetCount", ...
// TotalFuncs counts every function including declarations, as CompilerGym's
// implementation does (it visits all functions of the module).
std::span<const std::string_view> instCountFeatureNames();

std::vector<std::int64_t> computeInstCount(const llvm::Module& module);

// Number of instructions in the module (CompilerGym's IrInstructionCount).
std::int64_t countInstructions(const llvm::Module& module);

}  // namespace kiln::llvm_engine
