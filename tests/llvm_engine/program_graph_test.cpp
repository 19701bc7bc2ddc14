// The program graph is correct by construction, checked against the IR on
// every kiln-bench-v0 program and on csmith programs, unoptimized and after
// passes: one instruction node per instruction, with ProGraML's full_text
// (the instruction as LLVM prints it); variables in their first user's
// block, with "type name"; constants with "type value"; control edges
// between instructions that follow each other or a reachable terminator and
// its successor's first instruction; one data edge per operand use at its
// position; call edges between reachable call sites and their callees'
// reachable returns; counts as InstCount's; the same graph from the module
// read back from bitcode; the wire form decodes to the same graph and
// refuses every truncation and corruption; the KPG1 form still decodes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include "common/types/program_graph.h"
#include "compilers/llvm_engine/program_graph.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/Support/raw_ostream.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/generators.h"
#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::passIndex;
using testing::passTable;

struct Program {
  std::string name;
  std::string bitcode;
};

std::vector<Program> programs() {
  std::vector<Program> all;
  for (const bundled::EmbeddedBenchmark& b : bundled::kilnBenchV0()) {
    all.push_back({"kiln-bench-v0/" + std::string(b.name),
                   std::string(reinterpret_cast<const char*>(b.bitcode.data()), b.bitcode.size())});
  }
  const datasets::DatasetConfig config;
  for (std::uint32_t seed = 1; seed <= 3; ++seed) {
    auto generated = datasets::generateCsmith(config, seed);
    EXPECT_TRUE(generated.ok()) << generated.status().toString();
    if (generated.ok()) all.push_back({"csmith-v0/" + std::to_string(seed), generated->bytes});
  }
  return all;
}

using Edge = std::tuple<const llvm::Value*, const llvm::Value*, std::uint32_t>;

// The blocks the entry reaches, by a walk of the successors.
std::set<const llvm::BasicBlock*> reachableBlocks(const llvm::Function& function) {
  std::set<const llvm::BasicBlock*> reached{&function.getEntryBlock()};
  std::vector<const llvm::BasicBlock*> work{&function.getEntryBlock()};
  while (!work.empty()) {
    const llvm::Instruction* terminator = work.back()->getTerminator();
    work.pop_back();
    for (unsigned i = 0; terminator != nullptr && i < terminator->getNumSuccessors(); ++i) {
      if (reached.insert(terminator->getSuccessor(i)).second) {
        work.push_back(terminator->getSuccessor(i));
      }
    }
  }
  return reached;
}

// Whether `use` is data: not a label, metadata or a direct callee.
bool isDataUse(const llvm::Instruction& instruction, const llvm::Use& use) {
  const llvm::Value* operand = use.get();
  if (llvm::isa<llvm::BasicBlock>(operand) || llvm::isa<llvm::MetadataAsValue>(operand)) {
    return false;
  }
  const auto* site = llvm::dyn_cast<llvm::CallBase>(&instruction);
  return !(site != nullptr && site->isCallee(&use) && llvm::isa<llvm::Function>(operand));
}

std::string printed(const llvm::Instruction& instruction, llvm::ModuleSlotTracker& slots) {
  std::string text;
  llvm::raw_string_ostream out(text);
  instruction.print(out, slots);
  return text.substr(text.find_first_not_of(' '));
}

// ProGraML's full_text and blocks of the nodes, against the IR.
void checkTextsAndBlocks(const llvm::Module& module, const ProgramGraph& graph,
                         const std::vector<const llvm::Value*>& values) {
  ASSERT_EQ(graph.nodeFullText.size(), graph.nodes());
  std::map<const llvm::Value*, std::uint32_t> node, instructionNode;
  for (std::uint32_t i = 1; i < graph.nodes(); ++i) {
    (graph.nodeKind[i] == GraphNodeKind::kInstruction ? instructionNode : node)[values[i]] = i;
  }
  std::map<const llvm::Value*, std::uint32_t> firstUserBlock;
  llvm::ModuleSlotTracker slots(&module);
  std::uint32_t block = 0;
  for (const llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    slots.incorporateFunction(function);
    for (const llvm::BasicBlock& basicBlock : function) {
      for (const llvm::Instruction& instruction : basicBlock) {
        const std::string text = printed(instruction, slots);
        EXPECT_EQ(graph.fullTexts.at(graph.nodeFullText[instructionNode.at(&instruction)]), text);
        if (!instruction.getType()->isVoidTy()) {
          const std::string name = text.substr(0, text.find(" = "));
          const std::string& full = graph.fullTexts.at(graph.nodeFullText[node.at(&instruction)]);
          EXPECT_TRUE(full.ends_with(" " + name)) << full << " for " << text;
          if (instruction.getType()->isStructTy()) {
            EXPECT_EQ(graph.texts[graph.nodeText[node.at(&instruction)]], "struct");
          }
        }
        for (const llvm::Use& use : instruction.operands()) {
          const llvm::Value* operand = use.get();
          if (!isDataUse(instruction, use)) continue;
          if (llvm::isa<llvm::Instruction>(operand) || llvm::isa<llvm::Argument>(operand)) {
            firstUserBlock.emplace(operand, block);
          }
          const auto* number = llvm::dyn_cast<llvm::ConstantInt>(operand);
          if (number != nullptr && number->getBitWidth() > 1) {  // i1 prints true/false
            // A constant says its value, as ProGraML's full_text.
            const std::string& full = graph.fullTexts.at(graph.nodeFullText[node.at(number)]);
            EXPECT_TRUE(full.ends_with(" " + llvm::toString(number->getValue(), 10, true))) << full;
          }
        }
      }
      ++block;
    }
  }
  for (const auto& [value, index] : node) {
    const bool local = llvm::isa<llvm::Instruction>(value) || llvm::isa<llvm::Argument>(value);
    if (!local) {
      EXPECT_EQ(graph.nodeBlock[index], kNoIndex);
    } else if (auto user = firstUserBlock.find(value); user != firstUserBlock.end()) {
      EXPECT_EQ(graph.nodeBlock[index], user->second) << "a variable is in its first user's block";
    }
  }
}

// Every invariant of the schema, on one module and its graph.
void checkAgainstIr(const llvm::Module& module, const ProgramGraph& graph,
                    const std::vector<const llvm::Value*>& values, std::int64_t instCountTotal) {
  ASSERT_EQ(values.size(), graph.nodes());
  ASSERT_GE(graph.nodes(), 1u);
  EXPECT_EQ(graph.texts.at(graph.nodeText[0]), "[external]");
  EXPECT_EQ(values[0], nullptr);

  // Nodes: one per instruction, with its opcode, function and block.
  std::map<const llvm::Instruction*, std::uint32_t> instructionNode;
  std::map<const llvm::Value*, std::uint32_t> valueNode;
  std::map<const llvm::Function*, std::uint32_t> functionIndex;
  for (const llvm::Function& function : module) {
    if (!function.isDeclaration()) {
      const auto index = static_cast<std::uint32_t>(functionIndex.size());
      functionIndex[&function] = index;
      EXPECT_EQ(graph.texts.at(graph.functionNames.at(index)), function.getName().str());
    }
  }
  std::size_t instructionNodes = 0;
  for (std::uint32_t node = 1; node < graph.nodes(); ++node) {
    const llvm::Value* value = values[node];
    ASSERT_NE(value, nullptr) << node;
    if (graph.nodeKind[node] == GraphNodeKind::kInstruction) {
      const auto* instruction = llvm::dyn_cast<llvm::Instruction>(value);
      ASSERT_NE(instruction, nullptr) << node;
      EXPECT_TRUE(instructionNode.emplace(instruction, node).second)
          << "two nodes, one instruction";
      EXPECT_EQ(graph.texts[graph.nodeText[node]], instruction->getOpcodeName());
      EXPECT_EQ(graph.nodeFunction[node], functionIndex.at(instruction->getFunction()));
      ++instructionNodes;
    } else {
      EXPECT_TRUE(valueNode.emplace(value, node).second) << "two nodes, one value";
      const bool variable = llvm::isa<llvm::Instruction>(value) ||
                            llvm::isa<llvm::Argument>(value) || llvm::isa<llvm::GlobalValue>(value);
      EXPECT_EQ(graph.nodeKind[node],
                variable ? GraphNodeKind::kVariable : GraphNodeKind::kConstant);
    }
  }
  // Blocks are numbered through the module.
  std::size_t instructions = 0;
  std::uint32_t block = 0;
  for (const llvm::Function& function : module) {
    for (const llvm::BasicBlock& basicBlock : function) {
      for (const llvm::Instruction& instruction : basicBlock) {
        ++instructions;
        ASSERT_TRUE(instructionNode.contains(&instruction));
        EXPECT_EQ(graph.nodeBlock[instructionNode[&instruction]], block);
      }
      ++block;
    }
  }
  EXPECT_EQ(instructionNodes, instructions);
  EXPECT_EQ(static_cast<std::int64_t>(instructionNodes), instCountTotal);

  // Edges, as the IR says they must be.
  std::multiset<Edge> control, data, call;
  for (std::size_t e = 0; e < graph.edges(); ++e) {
    Edge edge{values[graph.edgeSource[e]], values[graph.edgeTarget[e]], graph.edgePosition[e]};
    if (graph.edgeFlow[e] == GraphEdgeFlow::kControl) control.insert(edge);
    if (graph.edgeFlow[e] == GraphEdgeFlow::kData) {
      // Data flows from a value's own node (a variable or constant) or from
      // an instruction to the variable it makes.
      const std::uint32_t source = graph.edgeSource[e];
      if (graph.nodeKind[source] == GraphNodeKind::kInstruction) {
        EXPECT_EQ(graph.nodeKind[graph.edgeTarget[e]], GraphNodeKind::kVariable);
        EXPECT_EQ(values[graph.edgeTarget[e]], values[source]);
        continue;
      }
      data.insert(edge);
    }
    if (graph.edgeFlow[e] == GraphEdgeFlow::kCall) call.insert(edge);
  }
  std::multiset<Edge> expectedControl, expectedData, expectedCall;
  std::map<const llvm::Function*, std::set<const llvm::BasicBlock*>> reachable;
  for (const llvm::Function& function : module) {
    if (!function.isDeclaration()) reachable[&function] = reachableBlocks(function);
  }
  for (const llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    const llvm::Instruction* entry = &function.getEntryBlock().front();
    expectedCall.insert({nullptr, entry, 0});
    for (const llvm::BasicBlock& block : function) {
      // A block the entry does not reach: no control out, no calls, no return.
      const bool reached = reachable[&function].contains(&block);
      for (const llvm::Instruction& instruction : block) {
        if (const llvm::Instruction* next = instruction.getNextNode()) {
          expectedControl.insert({&instruction, next, 0});
        }
        for (unsigned i = 0;
             reached && instruction.isTerminator() && i < instruction.getNumSuccessors(); ++i) {
          expectedControl.insert({&instruction, &instruction.getSuccessor(i)->front(), i});
        }
        if (reached && llvm::isa<llvm::ReturnInst>(instruction)) {
          expectedCall.insert({&instruction, nullptr, 0});
        }
        const auto* site = llvm::dyn_cast<llvm::CallBase>(&instruction);
        for (const llvm::Use& use : instruction.operands()) {
          if (!isDataUse(instruction, use)) continue;
          expectedData.insert({use.get(), &instruction, use.getOperandNo()});
        }
        if (site == nullptr || !reached) continue;
        const llvm::Function* callee = site->getCalledFunction();
        if (callee == nullptr || callee->isDeclaration()) {
          expectedCall.insert({&instruction, nullptr, 0});
          expectedCall.insert({nullptr, &instruction, 0});
          continue;
        }
        expectedCall.insert({&instruction, &callee->getEntryBlock().front(), 0});
        for (const llvm::BasicBlock& calleeBlock : *callee) {
          if (llvm::isa<llvm::ReturnInst>(calleeBlock.getTerminator()) &&
              reachable[callee].contains(&calleeBlock)) {
            expectedCall.insert({calleeBlock.getTerminator(), &instruction, 0});
          }
        }
      }
    }
  }
  EXPECT_TRUE(control == expectedControl)
      << control.size() << " control edges, " << expectedControl.size() << " expected";
  EXPECT_TRUE(data == expectedData)
      << data.size() << " data edges, " << expectedData.size() << " expected";
  EXPECT_TRUE(call == expectedCall)
      << call.size() << " call edges, " << expectedCall.size() << " expected";
  checkTextsAndBlocks(module, graph, values);
}

void checkState(const ModuleState& state, const std::string& name) {
  SCOPED_TRACE(name);
  std::vector<const llvm::Value*> values;
  auto graph = buildProgramGraph(*state.module(), kMaxGraphNodes, &values);
  ASSERT_TRUE(graph.ok()) << graph.status().toString();
  auto counts = state.instCountDict();
  ASSERT_TRUE(counts.ok());
  std::int64_t total = -1;
  for (const NamedValue& count : *counts) {
    if (count.name == "TotalInstsCount") total = count.value.as<std::int64_t>();
  }
  checkAgainstIr(*state.module(), *graph, values, total);

  // The wire form, and the module read back from its bitcode.
  auto decoded = decodeProgramGraph(encodeProgramGraph(*graph));
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_TRUE(*decoded == *graph);
  auto bitcode = state.bitcode();
  ASSERT_TRUE(bitcode.ok());
  auto readBack = ModuleState::fromBitcode(passTable(), bitcode->data, name);
  ASSERT_TRUE(readBack.ok()) << readBack.status().toString();
  auto again = buildProgramGraph(*(*readBack)->module());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *graph) << "the graph of the module read back differs";
  auto observed = state.programGraph();
  ASSERT_TRUE(observed.ok());
  EXPECT_EQ(observed->data, encodeProgramGraph(*graph));
}

TEST(ProgramGraphTest, EveryInvariantHoldsOnKilnBenchAndCsmithPrograms) {
  for (const Program& program : programs()) {
    auto state = ModuleState::fromBitcode(passTable(), program.bitcode, program.name);
    ASSERT_TRUE(state.ok()) << program.name << ": " << state.status().toString();
    checkState(**state, program.name + " unoptimized");
    // Passes that move instructions, fold constants, make phis and inline
    // calls: the graph follows the module.
    for (const char* pass : {"mem2reg", "instcombine", "simplifycfg", "inline", "gvn"}) {
      ASSERT_TRUE((*state)->applyPass(passIndex(pass)).ok()) << pass;
    }
    checkState(**state, program.name + " after mem2reg instcombine simplifycfg inline gvn");
  }
}

// A module with what ProGraML defines apart: a block the entry never reaches
// (with a call and a return), a struct value, constants with values, and a
// value used first in another block than its own.
constexpr const char* kDeadBlockModule = R"(
%pair = type { i32, i32 }
define i32 @callee(i32 %x) {
  %y = add i32 %x, 7
  ret i32 %y
}
define i32 @caller(i32 %n) {
entry:
  %v = call i32 @callee(i32 %n)
  %s = insertvalue %pair undef, i32 %v, 0
  br label %next
next:
  %w = add i32 %v, 42
  ret i32 %w
dead:
  %z = call i32 @callee(i32 %n)
  ret i32 %z
}
)";

TEST(ProgramGraphTest, ProGraMLsDefinitionsOfTextsBlocksAndReachability) {
  auto state = ModuleState::fromIrText(passTable(), kDeadBlockModule, "dead-block");
  ASSERT_TRUE(state.ok()) << state.status().toString();
  checkState(**state, "dead block");
  std::vector<const llvm::Value*> values;
  auto graph = buildProgramGraph(*(*state)->module(), kMaxGraphNodes, &values);
  ASSERT_TRUE(graph.ok());
  auto nodeOf = [&](std::string_view full) {
    for (std::uint32_t i = 0; i < graph->nodes(); ++i) {
      if (graph->fullTexts[graph->nodeFullText[i]] == full) return i;
    }
    ADD_FAILURE() << "no node with full_text " << full;
    return 0u;
  };
  const std::uint32_t deadCall = nodeOf("%z = call i32 @callee(i32 %n)");
  const std::uint32_t deadReturn = nodeOf("ret i32 %z");
  const std::uint32_t liveCall = nodeOf("%v = call i32 @callee(i32 %n)");
  for (std::size_t e = 0; e < graph->edges(); ++e) {
    if (graph->edgeFlow[e] != GraphEdgeFlow::kCall) continue;
    EXPECT_NE(graph->edgeSource[e], deadCall) << "a dead block's call site calls";
    EXPECT_NE(graph->edgeSource[e], deadReturn) << "a dead block's return returns";
    EXPECT_NE(graph->edgeTarget[e], deadCall);
  }
  // The live call site has its call, the callee's return back, and (it is
  // the caller's first instruction) the root's call of the caller.
  std::size_t liveCalls = 0;
  for (std::size_t e = 0; e < graph->edges(); ++e) {
    if (graph->edgeFlow[e] == GraphEdgeFlow::kCall &&
        (graph->edgeSource[e] == liveCall || graph->edgeTarget[e] == liveCall)) {
      ++liveCalls;
    }
  }
  EXPECT_EQ(liveCalls, 3u);
  // Texts: a constant's value, a variable's "type name", a struct as "struct".
  EXPECT_EQ(graph->texts[graph->nodeText[nodeOf("i32 42")]], "i32");
  EXPECT_EQ(graph->nodeKind[nodeOf("i32 42")], GraphNodeKind::kConstant);
  EXPECT_EQ(graph->texts[graph->nodeText[nodeOf("struct %s")]], "struct");
  // %v is made in the entry block (caller's first, block 2 of the module)
  // and used first there; %n, an argument, is in its first user's block.
  EXPECT_EQ(graph->nodeBlock[nodeOf("i32 %v")], 1u);
  EXPECT_EQ(graph->nodeBlock[nodeOf("i32 %n")], 1u);
  EXPECT_EQ(graph->nodeBlock[nodeOf("i32 %w")], 2u);
  EXPECT_EQ(graph->fullTexts[graph->nodeFullText[0]], "");
}

TEST(ProgramGraphTest, TheFormerWireFormWithoutFullTextsStillDecodes) {
  // KPG1: KPG2 less the full text count, table and per-node indices.
  ProgramGraph graph;
  graph.texts = {"[external]", "f", "ret"};
  graph.functionNames = {1};
  graph.nodeKind = {GraphNodeKind::kInstruction, GraphNodeKind::kInstruction};
  graph.nodeText = {0, 2};
  graph.nodeFunction = {kNoIndex, 0};
  graph.nodeBlock = {kNoIndex, 0};
  graph.edgeFlow = {GraphEdgeFlow::kCall};
  graph.edgeSource = {0};
  graph.edgeTarget = {1};
  graph.edgePosition = {0};
  std::string wire = encodeProgramGraph(graph);  // no full texts: count 0, no indices
  ASSERT_TRUE(wire.starts_with("KPG2"));
  std::string former = "KPG1" + wire.substr(4, 16) + wire.substr(24);
  auto decoded = decodeProgramGraph(former);
  ASSERT_TRUE(decoded.ok()) << decoded.status().toString();
  EXPECT_TRUE(*decoded == graph);
  EXPECT_TRUE(decoded->nodeFullText.empty());
  // With full texts, the round trip keeps them.
  graph.fullTexts = {"", "ret void"};
  graph.nodeFullText = {0, 1};
  auto again = decodeProgramGraph(encodeProgramGraph(graph));
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_TRUE(*again == graph);
  graph.nodeFullText = {0, 2};
  EXPECT_FALSE(decodeProgramGraph(encodeProgramGraph(graph)).ok()) << "a full text out of range";
}

TEST(ProgramGraphTest, TheObservationIsKeptUntilTheIrChanges) {
  auto state = testing::loadKilnBenchProgram("crc32");
  ASSERT_NE(state, nullptr);
  auto first = state->programGraph();
  ASSERT_TRUE(first.ok());
  // A fork shares it; a change rebuilds it; a pass with no effect keeps it.
  auto clone = state->clone();
  ASSERT_TRUE(clone.ok());
  EXPECT_TRUE((*clone)->programGraph()->data == first->data);
  auto outcome = state->applyPass(passIndex("mem2reg"));
  ASSERT_TRUE(outcome.ok() && outcome->changed);
  auto changed = state->programGraph();
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->data == first->data);
  EXPECT_LT(decodeProgramGraph(changed->data)->nodes(), decodeProgramGraph(first->data)->nodes());
  auto again = state->applyPass(passIndex("mem2reg"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_TRUE(state->programGraph()->data == changed->data);
  // The fork still has the graph of the module it was made from.
  EXPECT_TRUE((*clone)->programGraph()->data == first->data);
}

TEST(ProgramGraphTest, AModuleOverTheNodeLimitIsRefusedWithTheCount) {
  auto state = testing::loadKilnBenchProgram("crc32");
  ASSERT_NE(state, nullptr);
  // Fewer nodes than instructions: refused before anything is built.
  auto refused = buildProgramGraph(*state->module(), 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("over the limit of 10"), std::string::npos)
      << refused.status().message();
  // Enough for the instructions, not for their variables: refused while built.
  const auto instructions = static_cast<std::uint32_t>(*state->instructionCount());
  auto partial = buildProgramGraph(*state->module(), instructions + 5);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("more than"), std::string::npos)
      << partial.status().message();
}

TEST(ProgramGraphTest, TheDecoderRefusesEveryTruncationAndCorruption) {
  auto state = testing::loadKilnBenchProgram("adler32");
  ASSERT_NE(state, nullptr);
  auto bytes = state->programGraph();
  ASSERT_TRUE(bytes.ok());
  const std::string& wire = bytes->data;
  // Every proper prefix is refused, saying where it ends.
  for (std::size_t length = 0; length < wire.size(); ++length) {
    auto decoded = decodeProgramGraph(std::string_view(wire).substr(0, length));
    ASSERT_FALSE(decoded.ok()) << length;
    EXPECT_EQ(decoded.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_FALSE(decodeProgramGraph(wire + "x").ok());
  // Bytes flipped anywhere: refused or decoded to a graph whose indices
  // are all in range (a flipped text byte is still a graph); never a crash.
  std::mt19937 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::string corrupt = wire;
    corrupt[random() % corrupt.size()] ^= static_cast<char>(1 + random() % 255);
    auto decoded = decodeProgramGraph(corrupt);
    if (!decoded.ok()) continue;
    for (std::size_t e = 0; e < decoded->edges(); ++e) {
      ASSERT_LT(decoded->edgeSource[e], decoded->nodes());
      ASSERT_LT(decoded->edgeTarget[e], decoded->nodes());
    }
    for (std::uint32_t text : decoded->nodeText) ASSERT_LT(text, decoded->texts.size());
  }
  // Counts that promise more than is there are refused before allocating.
  std::string huge = wire;
  for (int b = 4; b < 20; ++b) huge[static_cast<std::size_t>(b)] = '\xff';
  auto refused = decodeProgramGraph(huge);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("over the bounds"), std::string::npos);
}

}  // namespace
}  // namespace kiln::llvm_engine
