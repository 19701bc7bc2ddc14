// The canonical textual form of a module, its SHA-1 and its bitcode. The
// canonical text is what `opt-19 -S` prints for the same module minus the two
// lines that name the input rather than the program: "; ModuleID = ..." and
// "source_filename = ...". Use-list order is not printed (as opt's default).
// kiln states always come from bitcode (see ModuleState::reload), so the text
// equals `opt-19 -S file.bc` for the state's bitcode; a `opt -S -passes=...`
// that prints without re-reading may differ in the attributes of intrinsic
// declarations, which the bitcode reader resets to their canonical set.
#pragma once

#include <string>
#include <string_view>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

std::string canonicalIrText(const llvm::Module& module);

// Lower-case hex SHA-1 of `text`.
std::string sha1Hex(std::string_view text);

// Bitcode with use-list order preserved, so that a module read back from it
// behaves exactly like the original under every pass.
std::string writeBitcode(const llvm::Module& module);

}  // namespace kiln::llvm_engine
