#include "compilers/llvm_engine/module_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compilers/llvm_engine/asm_policy.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalAlias.h"
#include "llvm/IR/GlobalIFunc.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/TypeFinder.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

constexpr std::string_view kWhereDocumented =
    "kiln refuses it (docs/security.md, \"A client's module\")";

// Named metadata through which the module names files for LLVM or a linker.
struct NamedRule {
  std::string_view name;
  std::string_view why;
};
constexpr std::array kRefusedMetadata = {
    NamedRule{"llvm.gcov", "names the files insert-gcov-profiling writes"},
    NamedRule{"llvm.dependent-libraries", "names libraries the linker opens"},
    NamedRule{"llvm.linker.options", "passes options to the linker"},
};

// Attributes whose number becomes bytes in the object.
constexpr std::array<std::string_view, 3> kSizeAttributes = {
    "patchable-function-entry", "patchable-function-prefix", "align-loops"};

Status refuse(std::string_view module, const std::string& what) {
  return invalidArgument(fmt::format("module '{}': {}; {}", module, what, kWhereDocumented));
}

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

// The global values an inline asm operand can print by name (through
// constant expressions: `@g`, `getelementptr (@g, ...)`).
void symbolsIn(const llvm::Value* value, llvm::SmallPtrSetImpl<const llvm::Value*>& seen,
               std::vector<const llvm::GlobalValue*>& out) {
  if (!seen.insert(value).second) return;
  if (const auto* global = llvm::dyn_cast<llvm::GlobalValue>(value)) {
    out.push_back(global);
    return;
  }
  const auto* constant = llvm::dyn_cast<llvm::ConstantExpr>(value);
  if (constant == nullptr) return;
  for (const llvm::Use& operand : constant->operands()) symbolsIn(operand.get(), seen, out);
}

// A symbol printed where a statement starts would be read as a directive if
// its name starts with '.'. Private symbols print with the target's private
// prefix (".L", "L", "$") unless the name asks for no mangling ('\1').
std::optional<std::string> directiveLikeSymbol(const llvm::CallBase& call) {
  llvm::SmallPtrSet<const llvm::Value*, 16> seen;
  std::vector<const llvm::GlobalValue*> symbols;
  for (const llvm::Use& argument : call.args()) symbolsIn(argument.get(), seen, symbols);
  for (const llvm::GlobalValue* symbol : symbols) {
    llvm::StringRef name = symbol->getName();
    bool unmangled = name.starts_with("\1");
    llvm::StringRef printed = unmangled ? name.drop_front() : name;
    if (printed.starts_with(".") && (unmangled || !symbol->hasPrivateLinkage())) {
      return fmt::format(
          "an operand of its inline asm prints the symbol '{}', which reads as a directive",
          printed.take_front(60).str());
    }
  }
  return std::nullopt;
}

std::uint64_t attributeNumber(const llvm::Function& function, std::string_view key) {
  llvm::Attribute attribute = function.getFnAttribute(llvm::StringRef(key.data(), key.size()));
  if (!attribute.isStringAttribute()) return 0;
  std::uint64_t value = 0;
  // Unparsable values are ignored by LLVM too.
  if (attribute.getValueAsString().getAsInteger(0, value)) return 0;
  return value;
}

// Bytes of data the code generator writes for globals and function layout.
std::uint64_t dataBytes(const llvm::Module& module) {
  const llvm::DataLayout& layout = module.getDataLayout();
  std::uint64_t total = 0;
  for (const llvm::GlobalVariable& global : module.globals()) {
    if (global.isDeclaration()) continue;
    // Zero-initialized variables go to .bss: size in the header, no bytes.
    bool bss =
        !global.isConstant() && global.getInitializer()->isNullValue() && !global.hasSection();
    if (bss) continue;
    llvm::TypeSize size = layout.getTypeAllocSize(global.getValueType());
    total = saturatingAdd(total, size.getKnownMinValue());
    if (auto align = global.getAlign()) total = saturatingAdd(total, align->value());
  }
  for (const llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    if (auto align = function.getAlign()) total = saturatingAdd(total, align->value());
    for (std::string_view key : kSizeAttributes) {
      // A patchable entry is up to 4 bytes a nop; a loop alignment pads every loop.
      std::uint64_t value = attributeNumber(function, key);
      total = saturatingAdd(total, value > (std::uint64_t{1} << 40) ? value : value * 4);
    }
    if (function.hasPrefixData()) {
      total = saturatingAdd(
          total, layout.getTypeAllocSize(function.getPrefixData()->getType()).getKnownMinValue());
    }
    if (function.hasPrologueData()) {
      total = saturatingAdd(
          total, layout.getTypeAllocSize(function.getPrologueData()->getType()).getKnownMinValue());
    }
  }
  return total;
}

// What one value costs the code generator, in 64-bit pieces of work: it
// splits a vector or an aggregate held in registers into its elements, and
// an integer wider than a register into 64-bit parts, multiplying (and
// constant-folding) those pairwise. A load, multiply and store of
// <65536 x i8> or of i16384 take llc-19 over a minute; a module of a few such
// instructions is a request that holds a worker for hours.
constexpr std::uint64_t kMaxValueCost = 512;
constexpr std::uint64_t kMaxModuleValueCost = std::uint64_t{1} << 22;
constexpr int kMaxTypeDepth = 32;

std::uint64_t saturatingMultiply(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b
             ? std::numeric_limits<std::uint64_t>::max()
             : a * b;
}

std::uint64_t valueCost(const llvm::Type* type, int depth = 0) {
  if (depth > kMaxTypeDepth) return std::numeric_limits<std::uint64_t>::max();
  if (const auto* integer = llvm::dyn_cast<llvm::IntegerType>(type)) {
    std::uint64_t parts = (integer->getBitWidth() + 63) / 64;
    return saturatingMultiply(parts, parts);
  }
  if (const auto* vector = llvm::dyn_cast<llvm::VectorType>(type)) {
    return saturatingMultiply(vector->getElementCount().getKnownMinValue(),
                              valueCost(vector->getElementType(), depth + 1));
  }
  if (const auto* array = llvm::dyn_cast<llvm::ArrayType>(type)) {
    return saturatingMultiply(array->getNumElements(),
                              valueCost(array->getElementType(), depth + 1));
  }
  if (const auto* structure = llvm::dyn_cast<llvm::StructType>(type)) {
    std::uint64_t total = 0;
    for (const llvm::Type* element : structure->elements()) {
      total = saturatingAdd(total, valueCost(element, depth + 1));
    }
    return total;
  }
  return 1;
}

// The values of a module, instruction by instruction and in function
// signatures: none may cost over kMaxValueCost, all together not over
// kMaxModuleValueCost (a module of ordinary instructions costs one each).
std::optional<std::string> valueCosts(const llvm::Module& module) {
  std::uint64_t total = 0;
  // The largest value among `types`, or why one is too large.
  auto largest = [](std::initializer_list<const llvm::Type*> first, const llvm::User* user,
                    const llvm::Function& function,
                    std::uint64_t& cost) -> std::optional<std::string> {
    auto check = [&](const llvm::Type* type) -> std::optional<std::string> {
      std::uint64_t one = valueCost(type);
      cost = std::max(cost, one);
      if (one <= kMaxValueCost) return std::nullopt;
      std::string shown;
      llvm::raw_string_ostream out(shown);
      type->print(out);
      return fmt::format(
          "function '{}' has a value of type {} that code generation splits into more than {} "
          "pieces (wide vectors, aggregates and integers take the code generator minutes to "
          "hours)",
          function.getName().take_front(80).str(), llvm::StringRef(shown).take_front(60).str(),
          kMaxValueCost);
    };
    for (const llvm::Type* type : first) {
      if (auto why = check(type)) return why;
    }
    if (user == nullptr) return std::nullopt;
    for (const llvm::Use& operand : user->operands()) {
      if (auto why = check(operand->getType())) return why;
    }
    return std::nullopt;
  };
  for (const llvm::Function& function : module) {
    for (const llvm::Type* type : function.getFunctionType()->params()) {
      std::uint64_t cost = 0;
      if (auto why = largest({type}, nullptr, function, cost)) return why;
      total = saturatingAdd(total, cost);
    }
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& instruction : block) {
        // An instruction costs its largest value (result or operand).
        std::uint64_t cost = 0;
        if (auto why = largest({instruction.getType()}, &instruction, function, cost)) return why;
        total = saturatingAdd(total, cost);
      }
    }
    std::uint64_t cost = 0;
    if (auto why = largest({function.getReturnType()}, nullptr, function, cost)) return why;
    total = saturatingAdd(total, cost);
  }
  if (total > kMaxModuleValueCost) {
    return fmt::format(
        "its instructions would cost code generation {} pieces of work (vector and aggregate "
        "elements, 64-bit parts of wide integers), over the limit of {}",
        total, kMaxModuleValueCost);
  }
  return std::nullopt;
}

// How deep the graph below `root` nests, measured without recursion (the
// point: LLVM's own walks recurse, and these graphs are the client's): a
// node is one deeper than its deepest child, every node is measured once
// across the calls that share `depth`, and a child still open is the node's
// own ancestor and counts as nothing. The first depth over `limit`, if any.
template <typename Node, typename ForEachChild>
std::optional<unsigned> depthOver(const Node* root, unsigned limit,
                                  llvm::DenseMap<const Node*, unsigned>& depth,
                                  const ForEachChild& forEachChild) {
  std::vector<std::pair<const Node*, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (depth.count(node) != 0) continue;
    if (!expanded) {
      stack.push_back({node, true});
      forEachChild(node, [&](const Node* child) {
        if (depth.count(child) == 0) stack.push_back({child, false});
      });
      continue;
    }
    unsigned deepest = 0;
    forEachChild(node, [&](const Node* child) {
      auto found = depth.find(child);
      if (found != depth.end()) deepest = std::max(deepest, found->second);
    });
    depth[node] = deepest + 1;
    if (deepest + 1 > limit) return deepest + 1;
  }
  return std::nullopt;
}

// How deep a module's types nest (a struct of a struct of ...): LLVM walks
// them recursively (DataLayout's struct layouts, the bitcode writer's type
// enumeration), and a chain of 100,000 named structs, under a megabyte of
// bitcode that LLVM's reader takes, overflowed the worker's stack. Walked
// here without recursion, every type once.
constexpr unsigned kMaxTypeNesting = 64;

std::optional<std::string> typeNesting(const llvm::Module& module) {
  llvm::TypeFinder types;
  types.run(module, /*onlyNamed=*/false);
  llvm::DenseMap<const llvm::Type*, unsigned> depth;
  auto elements = [](const llvm::Type* type, auto&& visit) {
    for (const llvm::Type* element : type->subtypes()) visit(element);
  };
  for (const llvm::Type* root : types) {
    if (auto over = depthOver<llvm::Type>(root, kMaxTypeNesting, depth, elements)) {
      return fmt::format(
          "its types nest {} deep or more, over {}: LLVM walks types "
          "recursively, and a deeper one overflows its stack",
          *over, kMaxTypeNesting);
    }
  }
  return std::nullopt;
}

// How deep a module's constants nest (constant expressions and aggregates
// inside one another): LLVM prints, folds and lowers them recursively, and
// 300 KB of bitcode with one initializer of 50,000 nested `xor`/`add`
// constant expressions, which LLVM's reader and verifier take, killed the
// worker when it was compiled or printed. Walked here without recursion,
// every constant once.
constexpr unsigned kMaxConstantNesting = 128;

std::optional<std::string> constantNesting(const llvm::Module& module) {
  llvm::DenseMap<const llvm::Constant*, unsigned> depth;
  auto nested = [](const llvm::Constant* constant) {
    // Globals are leaves: their initializers are walked as roots.
    return !llvm::isa<llvm::GlobalValue>(constant) &&
           (llvm::isa<llvm::ConstantExpr>(constant) ||
            llvm::isa<llvm::ConstantAggregate>(constant));
  };
  auto operands = [&](const llvm::Constant* constant, auto&& visit) {
    for (const llvm::Use& operand : constant->operands()) {
      const auto* inner = llvm::dyn_cast<llvm::Constant>(operand.get());
      if (inner != nullptr && nested(inner)) visit(inner);
    }
  };
  auto walk = [&](const llvm::Constant* root) -> std::optional<std::string> {
    if (root == nullptr || !nested(root)) return std::nullopt;
    if (auto over = depthOver<llvm::Constant>(root, kMaxConstantNesting, depth, operands)) {
      return fmt::format(
          "its constants nest {} deep or more, over {}: LLVM prints, folds and "
          "lowers constants recursively, and a deeper one overflows its stack",
          *over, kMaxConstantNesting);
    }
    return std::nullopt;
  };
  for (const llvm::GlobalVariable& global : module.globals()) {
    if (!global.hasInitializer()) continue;
    if (auto why = walk(global.getInitializer())) return why;
  }
  for (const llvm::GlobalAlias& alias : module.aliases()) {
    if (auto why = walk(alias.getAliasee())) return why;
  }
  for (const llvm::GlobalIFunc& ifunc : module.ifuncs()) {
    if (auto why = walk(ifunc.getResolver())) return why;
  }
  for (const llvm::Function& function : module) {
    for (const llvm::Constant* attached :
         {function.hasPrefixData() ? function.getPrefixData() : nullptr,
          function.hasPrologueData() ? function.getPrologueData() : nullptr,
          function.hasPersonalityFn() ? function.getPersonalityFn() : nullptr}) {
      if (auto why = walk(attached)) return why;
    }
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& instruction : block) {
        for (const llvm::Use& operand : instruction.operands()) {
          if (auto why = walk(llvm::dyn_cast<llvm::Constant>(operand.get()))) return why;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Status checkIrTextNesting(std::string_view text, std::string_view name) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // IR strings escape with \XX hex digits: a '"' always ends them.
      std::size_t end = text.find('"', i + 1);
      i = end == std::string_view::npos ? text.size() : end;
    } else if (c == ';') {
      std::size_t end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxIrTextNesting) {
        return refuse(name, fmt::format("its IR text nests brackets over {} deep (at byte {}): "
                                        "LLVM's parser recurses on each, and a deeper text "
                                        "overflows its stack",
                                        kMaxIrTextNesting, i));
      }
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return okStatus();
}

Status checkClientModule(const llvm::Module& module, std::string_view name,
                         std::uint64_t maxDataBytes) {
  if (auto why = typeNesting(module)) return refuse(name, *why);
  if (auto why = constantNesting(module)) return refuse(name, *why);
  for (const NamedRule& rule : kRefusedMetadata) {
    if (module.getNamedMetadata(llvm::StringRef(rule.name.data(), rule.name.size())) != nullptr) {
      return refuse(name, fmt::format("metadata !{} {}", rule.name, rule.why));
    }
  }
  std::uint64_t fill = 0;
  AsmVerdict moduleAsm = checkAssembly(module.getModuleInlineAsm(), AsmSource::kModule);
  if (moduleAsm.refused) return refuse(name, "module asm " + *moduleAsm.refused);
  fill = moduleAsm.fillBytes;
  std::uint64_t assignments = moduleAsm.assignmentCost;
  for (const llvm::Function& function : module) {
    for (const llvm::BasicBlock& block : function) {
      for (const llvm::Instruction& instruction : block) {
        const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
        if (call == nullptr || !call->isInlineAsm()) continue;
        const auto* inlineAsm = llvm::cast<llvm::InlineAsm>(call->getCalledOperand());
        std::string where =
            fmt::format("inline asm in function '{}'", function.getName().take_front(80).str());
        std::size_t operands = 0;
        for (const llvm::InlineAsm::ConstraintInfo& constraint : inlineAsm->ParseConstraints()) {
          if (constraint.Type != llvm::InlineAsm::isClobber) ++operands;
        }
        AsmVerdict verdict = checkAssembly(inlineAsm->getAsmString(), AsmSource::kInline, operands);
        if (verdict.refused) return refuse(name, where + ": " + *verdict.refused);
        if (auto why = directiveLikeSymbol(*call)) return refuse(name, where + ": " + *why);
        fill = saturatingAdd(fill, verdict.fillBytes);
        assignments = saturatingAdd(assignments, verdict.assignmentCost);
      }
    }
  }
  if (assignments > kMaxAssignmentCost) {
    return refuse(name, fmt::format("its assembly assigns symbols at a cost of {} (each "
                                    "assignment its operators plus one), over {}: evaluating a "
                                    "chain of them overflows the assembler's stack",
                                    assignments, kMaxAssignmentCost));
  }
  if (auto why = valueCosts(module)) return refuse(name, *why);
  std::uint64_t data = saturatingAdd(dataBytes(module), fill);
  if (data > maxDataBytes) {
    return refuse(name, fmt::format("its code would hold at least {} bytes of data (initialized "
                                    "globals, alignment, assembler fills), over the limit of {} "
                                    "bytes (the worker's --max-module-data-bytes)",
                                    data, maxDataBytes));
  }
  return okStatus();
}

}  // namespace kiln::llvm_engine
