// The 56 Autophase features of Huang et al. (FCCM 2019) in the order and with
// the definitions CompilerGym uses: CFG shape counts, phi statistics,
// constant-operand counts and selected opcode counts over all functions.
// Deterministic, platform independent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

inline constexpr std::size_t kAutophaseDims = 56;

// "BBNumArgsHi", "BBNumArgsLo", "onePred", ..., "ArgsPhi", "testUnary".
std::span<const std::string_view> autophaseFeatureNames();

std::vector<std::int64_t> computeAutophase(const llvm::Module& module);

}  // namespace kiln::llvm_engine
