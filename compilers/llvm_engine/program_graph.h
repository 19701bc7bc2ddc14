// The program graph (common/types/program_graph.h; schema: docs/program-graph.md)
// of an LLVM 19 module, built in one walk over it:
//   node 0            "[external]", the root: what lies outside the module
//   per instruction   an instruction node, its opcode as text
//   per value made    a variable node (an instruction's result, a function
//                     argument, a global), its type as text ("struct" for a
//                     struct, as ProGraML), in its first user's block
//   per constant      one constant node per distinct constant used
// each with ProGraML's full_text: the instruction as LLVM prints it, a
// variable's "type name", a constant's "type value";
// and edges
//   control  an instruction to the next in its block (position 0); a
//            terminator of a block the entry reaches to the first
//            instruction of successor i (position i)
//   data     an instruction to its result's variable (position 0); a
//            variable or constant to each instruction using it (position =
//            the operand's index); labels, metadata and a direct callee are
//            not data
//   call     a call site to its callee's entry and each of the callee's
//            returns back to it; a call of a declaration or through a
//            pointer to and from the root; the root to every defined
//            function's entry and each return back to the root. Only call
//            sites and returns in blocks the entry reaches have call edges.
#pragma once

#include <cstdint>
#include <vector>

#include <kiln/status.h>
#include "common/types/program_graph.h"

namespace llvm {
class Module;
class Value;
}  // namespace llvm

namespace kiln::llvm_engine {

// invalid-argument when the graph would have more than `maxNodes` nodes
// (counted before anything is built). `nodeValues`, when given, receives the
// LLVM value of each node (null for the root): for tests.
Result<ProgramGraph> buildProgramGraph(const llvm::Module& module,
                                       std::uint32_t maxNodes = kMaxGraphNodes,
                                       std::vector<const llvm::Value*>* nodeValues = nullptr);

}  // namespace kiln::llvm_engine
