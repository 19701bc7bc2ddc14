#include "compilers/llvm_engine/module_policy.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compilers/llvm_engine/asm_policy.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstrTypes.h"
#include "llvm/IR/Module.h"

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

}  // namespace

Status checkClientModule(const llvm::Module& module, std::string_view name) {
  for (const NamedRule& rule : kRefusedMetadata) {
    if (module.getNamedMetadata(llvm::StringRef(rule.name.data(), rule.name.size())) != nullptr) {
      return refuse(name, fmt::format("metadata !{} {}", rule.name, rule.why));
    }
  }
  std::uint64_t fill = 0;
  AsmVerdict moduleAsm = checkAssembly(module.getModuleInlineAsm(), AsmSource::kModule);
  if (moduleAsm.refused) return refuse(name, "module asm " + *moduleAsm.refused);
  fill = moduleAsm.fillBytes;
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
      }
    }
  }
  std::uint64_t data = saturatingAdd(dataBytes(module), fill);
  if (data > kMaxModuleDataBytes) {
    return refuse(name, fmt::format("its code would hold at least {} bytes of data (initialized "
                                    "globals, alignment, assembler fills), over the limit of {}",
                                    data, kMaxModuleDataBytes));
  }
  return okStatus();
}

}  // namespace kiln::llvm_engine
