#include "compilers/llvm_engine/name_counters.h"

#include <cstdint>

#include "llvm/IR/Module.h"
#include "llvm/IR/ValueSymbolTable.h"

namespace kiln::llvm_engine {
namespace {

// LLVM offers no way to reset the counter (ValueSymbolTable::LastUnique is
// private). An explicit instantiation may name a private member
// ([temp.spec.general]: access is not checked there), which hands out a
// pointer to it without touching LLVM. Pinned to LLVM 19's layout by the
// member's type: a change there fails to compile rather than misbehave.
using CounterMember = std::uint32_t llvm::ValueSymbolTable::*;

CounterMember lastUniqueMember();

template <CounterMember Member>
struct LastUniqueAccess {
  friend CounterMember lastUniqueMember() { return Member; }
};

template struct LastUniqueAccess<&llvm::ValueSymbolTable::LastUnique>;

void reset(llvm::ValueSymbolTable* table) {
  if (table != nullptr) table->*lastUniqueMember() = 0;
}

}  // namespace

void resetNameCounters(llvm::Module& module) {
  reset(&module.getValueSymbolTable());
  for (llvm::Function& function : module) reset(function.getValueSymbolTable());
}

}  // namespace kiln::llvm_engine
