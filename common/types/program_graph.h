// A program as a graph, in the style of ProGraML: instruction, variable and
// constant nodes joined by control, data and call edges, each edge with its
// position (the operand's index, the successor's index). The schema and how
// it differs from ProGraML's is docs/program-graph.md; compilers/llvm_engine/
// program_graph.h builds one from an LLVM module.
//
// The wire form ("KPG2", the `Programl` observation's bytes) is a header and
// flat arrays, so that a learner maps it straight into tensors:
//   "KPG2", u32 nodes, u32 edges, u32 functions, u32 texts, u32 full texts
//   texts:      per text a u32 length and its bytes, then zero padding to 4
//   full texts: the same (ProGraML's `full_text` feature of the nodes)
//   functions:  u32 text index of each function's name
//   nodes:      u32 text[], u32 full text[] (absent when there are no full
//               texts), u32 function[], u32 block[] (numbered through the
//               module), then u8 kind[]
//   edges:      u32 source[], u32 target[], u32 position[], then u8 flow[]
// All integers little-endian; kNoIndex (0xFFFFFFFF) where a node has no
// function or block. The decoders also read "KPG1", the same without the
// full texts (its header has no full text count), which kiln sent before.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln {

enum class GraphNodeKind : std::uint8_t { kInstruction = 0, kVariable = 1, kConstant = 2 };
enum class GraphEdgeFlow : std::uint8_t { kControl = 0, kData = 1, kCall = 2 };
inline constexpr std::uint32_t kNoIndex = 0xFFFFFFFF;

struct ProgramGraph {
  // Distinct node texts and function names; nodes refer to them by index.
  std::vector<std::string> texts;
  std::vector<std::uint32_t> functionNames;  // text index, per function
  // Nodes, one entry per node in each array.
  std::vector<GraphNodeKind> nodeKind;
  std::vector<std::uint32_t> nodeText;
  std::vector<std::uint32_t> nodeFunction;  // kNoIndex: the root, globals, constants
  std::vector<std::uint32_t> nodeBlock;     // through the module; kNoIndex outside blocks
  // ProGraML's full_text per node (the instruction as LLVM prints it, a
  // variable's "type name", a constant's "type value"): an index into
  // fullTexts per node, or no entries at all (a graph without them).
  std::vector<std::string> fullTexts;
  std::vector<std::uint32_t> nodeFullText;
  // Edges, one entry per edge in each array.
  std::vector<GraphEdgeFlow> edgeFlow;
  std::vector<std::uint32_t> edgeSource;
  std::vector<std::uint32_t> edgeTarget;
  std::vector<std::uint32_t> edgePosition;

  std::size_t nodes() const { return nodeKind.size(); }
  std::size_t edges() const { return edgeFlow.size(); }
  bool operator==(const ProgramGraph&) const = default;
};

// Bounds a decoder holds a graph from outside to.
inline constexpr std::uint32_t kMaxGraphNodes = 1u << 24;
inline constexpr std::uint32_t kMaxGraphEdges = 1u << 26;

std::string encodeProgramGraph(const ProgramGraph& graph);
// invalid-argument naming what is wrong: no magic, truncated, counts over
// the bounds, a text, function, node or kind index out of range, bytes left
// over. Reads "KPG2" and "KPG1" (which has no full texts).
Result<ProgramGraph> decodeProgramGraph(std::string_view bytes);

}  // namespace kiln
