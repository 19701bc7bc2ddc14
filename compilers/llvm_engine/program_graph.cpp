#include "compilers/llvm_engine/program_graph.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_map>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/DepthFirstIterator.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

constexpr const char* kRootText = "[external]";

class GraphBuilder {
 public:
  GraphBuilder(std::uint32_t maxNodes, std::vector<const llvm::Value*>* nodeValues)
      : maxNodes_(maxNodes), nodeValues_(nodeValues) {}

  Result<ProgramGraph> build(const llvm::Module& module) {
    std::uint64_t instructions = 0;
    for (const llvm::Function& function : module) instructions += function.getInstructionCount();
    if (instructions + 1 > maxNodes_) return tooLarge(instructions + 1);
    // One slot tracker for the module: printing each instruction alone would
    // number its function again per instruction.
    slots_.emplace(&module);
    root_ = addNode(GraphNodeKind::kInstruction, text(kRootText), kNoIndex, kNoIndex, nullptr);
    graph_.nodeFullText.back() = fullText("");
    // Nodes first (instructions and the variables they make), so that an
    // operand defined later (a phi's) has its node when edges are drawn.
    for (const llvm::Function& function : module) {
      if (function.isDeclaration()) continue;
      addFunctionNodes(function);
      if (full_) return tooLarge(graph_.nodes() + 1);
    }
    for (const llvm::Function& function : module) {
      if (function.isDeclaration()) continue;
      addFunctionEdges(function);
      if (full_) return tooLarge(graph_.nodes() + 1);
    }
    return std::move(graph_);
  }

 private:
  struct FunctionNodes {
    std::uint32_t entry = kNoIndex;
    std::vector<std::uint32_t> returns;
  };

  Status tooLarge(std::uint64_t atLeast) const {
    return invalidArgument(
        fmt::format("the module's program graph would have {}{} nodes, over the limit of {}",
                    full_ ? "more than " : "", full_ ? maxNodes_ : atLeast, maxNodes_));
  }

  std::uint32_t text(std::string_view value) {
    auto [it, added] =
        textIndex_.try_emplace(std::string(value), static_cast<std::uint32_t>(graph_.texts.size()));
    if (added) graph_.texts.emplace_back(value);
    return it->second;
  }

  std::uint32_t fullText(std::string_view value) {
    auto [it, added] = fullTextIndex_.try_emplace(
        std::string(value), static_cast<std::uint32_t>(graph_.fullTexts.size()));
    if (added) graph_.fullTexts.emplace_back(value);
    return it->second;
  }

  // A type as ProGraML writes one: "struct" for a struct (its name and
  // members aside), else as LLVM prints it ("i32", "ptr", "[4 x i8]").
  const std::string& typeString(llvm::Type* type) {
    auto [it, added] = typeStrings_.try_emplace(type);
    if (added) {
      if (type->isStructTy()) {
        it->second = "struct";
      } else {
        llvm::raw_string_ostream out(it->second);
        type->print(out);
      }
    }
    return it->second;
  }

  std::uint32_t typeText(llvm::Type* type) { return text(typeString(type)); }

  // A value as an operand, with its type: "i32 %5", "i32 7", "ptr @table".
  std::string operandString(const llvm::Value& value) {
    std::string printed;
    llvm::raw_string_ostream out(printed);
    value.printAsOperand(out, /*PrintType=*/true, *slots_);
    return printed;
  }

  static std::string trimmedLeft(std::string printed) {
    const std::size_t start = printed.find_first_not_of(' ');
    return start == std::string::npos ? std::string() : printed.substr(start);
  }

  std::uint32_t addNode(GraphNodeKind kind, std::uint32_t textIndex, std::uint32_t function,
                        std::uint32_t block, const llvm::Value* value) {
    if (graph_.nodes() >= maxNodes_) {
      full_ = true;
      return root_;
    }
    graph_.nodeKind.push_back(kind);
    graph_.nodeText.push_back(textIndex);
    graph_.nodeFunction.push_back(function);
    graph_.nodeBlock.push_back(block);
    graph_.nodeFullText.push_back(0);  // set by the caller
    if (nodeValues_ != nullptr) nodeValues_->push_back(value);
    return static_cast<std::uint32_t>(graph_.nodes() - 1);
  }

  void addEdge(GraphEdgeFlow flow, std::uint32_t source, std::uint32_t target,
               std::uint32_t position) {
    graph_.edgeFlow.push_back(flow);
    graph_.edgeSource.push_back(source);
    graph_.edgeTarget.push_back(target);
    graph_.edgePosition.push_back(position);
  }

  void addFunctionNodes(const llvm::Function& function) {
    const auto index = static_cast<std::uint32_t>(graph_.functionNames.size());
    graph_.functionNames.push_back(text(function.getName()));
    slots_->incorporateFunction(function);
    for (const llvm::BasicBlock* reached : llvm::depth_first(&function.getEntryBlock())) {
      reachable_.insert(reached);
    }
    FunctionNodes& nodes = functions_[&function];
    for (const llvm::Argument& argument : function.args()) {
      // An argument's block is its first user's (set with the data edges).
      const std::uint32_t node = addNode(GraphNodeKind::kVariable, typeText(argument.getType()),
                                         index, kNoIndex, &argument);
      graph_.nodeFullText[node] = fullText(operandString(argument));
      values_[&argument] = node;
    }
    for (const llvm::BasicBlock& basicBlock : function) {
      const std::uint32_t block = blocks_++;
      for (const llvm::Instruction& instruction : basicBlock) {
        addInstructionNodes(instruction, index, block, nodes);
      }
    }
  }

  void addInstructionNodes(const llvm::Instruction& instruction, std::uint32_t function,
                           std::uint32_t block, FunctionNodes& nodes) {
    std::string printed;
    llvm::raw_string_ostream out(printed);
    instruction.print(out, *slots_);
    const std::string full = trimmedLeft(std::move(out.str()));
    const std::uint32_t node = addNode(GraphNodeKind::kInstruction, opcodeText(instruction),
                                       function, block, &instruction);
    graph_.nodeFullText[node] = fullText(full);
    instructions_[&instruction] = node;
    if (nodes.entry == kNoIndex) nodes.entry = node;
    // A return in a block the entry never reaches returns to no caller.
    if (llvm::isa<llvm::ReturnInst>(instruction) && reachable_.contains(instruction.getParent())) {
      nodes.returns.push_back(node);
    }
    if (instruction.getType()->isVoidTy()) return;
    // ProGraML's variable text: "<type> <name>", the name as the
    // instruction's left-hand side prints it. Its block is its first user's
    // (set with the data edges); the producer's while it has no user.
    const std::uint32_t variable = addNode(
        GraphNodeKind::kVariable, typeText(instruction.getType()), function, block, &instruction);
    const std::size_t equals = full.find(" = ");
    graph_.nodeFullText[variable] =
        fullText(typeString(instruction.getType()) + " " +
                 (equals == std::string::npos ? full : full.substr(0, equals)));
    values_[&instruction] = variable;
  }

  std::uint32_t opcodeText(const llvm::Instruction& instruction) {
    auto [it, added] = opcodeTexts_.try_emplace(instruction.getOpcode(), 0);
    if (added) it->second = text(instruction.getOpcodeName());
    return it->second;
  }

  // The node a use of `value` comes from; kNoIndex for what is not data.
  std::uint32_t operandNode(const llvm::Value* value) {
    if (llvm::isa<llvm::BasicBlock>(value) || llvm::isa<llvm::MetadataAsValue>(value)) {
      return kNoIndex;
    }
    if (auto found = values_.find(value); found != values_.end()) return found->second;
    // Globals are variables of the module; everything else left (numbers,
    // null, undef, poison, constant expressions, inline asm) is a constant.
    const bool global = llvm::isa<llvm::GlobalValue>(value);
    const std::uint32_t node = addNode(global ? GraphNodeKind::kVariable : GraphNodeKind::kConstant,
                                       typeText(value->getType()), kNoIndex, kNoIndex, value);
    graph_.nodeFullText[node] = fullText(operandString(*value));
    values_[value] = node;
    return node;
  }

  void addFunctionEdges(const llvm::Function& function) {
    const FunctionNodes& own = functions_.at(&function);
    addEdge(GraphEdgeFlow::kCall, root_, own.entry, 0);
    for (std::uint32_t ret : own.returns) addEdge(GraphEdgeFlow::kCall, ret, root_, 0);
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& instruction : block) {
        const std::uint32_t node = instructions_.at(&instruction);
        // A block the entry never reaches has its instructions and data, but
        // no control out of it and no calls (ProGraML walks the blocks from
        // the entry for its control and return edges).
        const bool reached = reachable_.contains(&block);
        addControlEdges(instruction, node, reached);
        if (auto made = values_.find(&instruction); made != values_.end()) {
          addEdge(GraphEdgeFlow::kData, node, made->second, 0);
        }
        addDataEdges(instruction, node);
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction); call && reached) {
          addCallEdges(*call, node);
        }
        if (full_) return;
      }
    }
  }

  void addControlEdges(const llvm::Instruction& instruction, std::uint32_t node, bool reached) {
    if (const llvm::Instruction* next = instruction.getNextNode()) {
      addEdge(GraphEdgeFlow::kControl, node, instructions_.at(next), 0);
      return;
    }
    if (!reached) return;
    // The terminator: to each successor's first instruction.
    for (unsigned i = 0; i < instruction.getNumSuccessors(); ++i) {
      addEdge(GraphEdgeFlow::kControl, node,
              instructions_.at(&instruction.getSuccessor(i)->front()), i);
    }
  }

  void addDataEdges(const llvm::Instruction& instruction, std::uint32_t node) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
    for (unsigned i = 0; i < instruction.getNumOperands(); ++i) {
      const llvm::Value* operand = instruction.getOperand(i);
      // A direct call's callee is a call edge, not data.
      if (call != nullptr && call->isCallee(&instruction.getOperandUse(i)) &&
          llvm::isa<llvm::Function>(operand)) {
        continue;
      }
      const std::uint32_t source = operandNode(operand);
      if (source == kNoIndex) continue;
      addEdge(GraphEdgeFlow::kData, source, node, i);
      takeFirstUsersBlock(operand, source, node);
    }
  }

  // ProGraML puts a variable in the block of the instruction that uses it;
  // kiln's one node per value goes in its first user's (in module order).
  // Constants and globals, shared by every function, stay outside blocks.
  void takeFirstUsersBlock(const llvm::Value* operand, std::uint32_t variable, std::uint32_t user) {
    if (!llvm::isa<llvm::Instruction>(operand) && !llvm::isa<llvm::Argument>(operand)) return;
    if (!placed_.insert(variable).second) return;
    graph_.nodeBlock[variable] = graph_.nodeBlock[user];
  }

  void addCallEdges(const llvm::CallBase& call, std::uint32_t node) {
    const llvm::Function* callee = call.getCalledFunction();
    if (callee == nullptr || callee->isDeclaration()) {
      addEdge(GraphEdgeFlow::kCall, node, root_, 0);
      addEdge(GraphEdgeFlow::kCall, root_, node, 0);
      return;
    }
    const FunctionNodes& target = functions_.at(callee);
    addEdge(GraphEdgeFlow::kCall, node, target.entry, 0);
    for (std::uint32_t ret : target.returns) addEdge(GraphEdgeFlow::kCall, ret, node, 0);
  }

  const std::uint32_t maxNodes_;
  std::vector<const llvm::Value*>* nodeValues_;
  bool full_ = false;
  std::uint32_t root_ = 0;
  std::uint32_t blocks_ = 0;  // blocks numbered through the module, as ProGraML does
  ProgramGraph graph_;
  std::unordered_map<std::string, std::uint32_t> textIndex_;
  std::unordered_map<std::string, std::uint32_t> fullTextIndex_;
  llvm::DenseMap<llvm::Type*, std::string> typeStrings_;
  std::optional<llvm::ModuleSlotTracker> slots_;
  llvm::DenseSet<const llvm::BasicBlock*> reachable_;
  llvm::DenseSet<std::uint32_t> placed_;  // variables whose block is their first user's
  llvm::DenseMap<unsigned, std::uint32_t> opcodeTexts_;
  llvm::DenseMap<const llvm::Value*, std::uint32_t> values_;
  llvm::DenseMap<const llvm::Instruction*, std::uint32_t> instructions_;
  llvm::DenseMap<const llvm::Function*, FunctionNodes> functions_;
};

}  // namespace

Result<ProgramGraph> buildProgramGraph(const llvm::Module& module, std::uint32_t maxNodes,
                                       std::vector<const llvm::Value*>* nodeValues) {
  if (nodeValues != nullptr) nodeValues->clear();
  return GraphBuilder(maxNodes, nodeValues).build(module);
}

}  // namespace kiln::llvm_engine
