// A cheap fingerprint of everything in a module that a pass could change
// while claiming to preserve all analyses: what LLVM's detailed
// StructuralHash covers (opcodes, types, operands, constants, predicates)
// plus what it leaves out: value names, the operand graph by identity,
// attribute lists, metadata attachments, instruction flags, alignments and
// orderings, global properties, and the order of use lists (of globals,
// arguments, blocks, instructions and the constants instructions use: the
// text prints a block's predecessors in that order, and passes that walk
// users follow it). Objects are hashed by address (uniqued
// constants, types, attribute lists and metadata, and every block and
// instruction with its operands), in module order: a pass that leaves the
// fingerprint equal changed no content and moved nothing (a pass that
// recreates an identical value elsewhere only costs a slow, exact check).
// Addresses make it meaningful only for one module in one LLVMContext:
// compare the fingerprints of one module before and after a pass, nothing else.
#pragma once

#include <cstdint>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

std::uint64_t moduleFingerprint(const llvm::Module& module);

}  // namespace kiln::llvm_engine
