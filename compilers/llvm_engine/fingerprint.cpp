#include "compilers/llvm_engine/fingerprint.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/xxhash.h"

namespace kiln::llvm_engine {
namespace {

// An order-sensitive 64-bit mix (multiply, xor-shift), several times cheaper
// than llvm::hash_combine per field, which matters at one field per
// instruction operand.
class Hasher {
 public:
  template <class... T>
  void add(const T&... parts) {
    (one(parts), ...);
  }
  std::uint64_t value() const { return state_; }

 private:
  void word(std::uint64_t x) {
    state_ = (state_ ^ x) * 0x9E3779B97F4A7C15ull;
    state_ ^= state_ >> 29;
  }
  void one(const void* p) { word(reinterpret_cast<std::uintptr_t>(p)); }
  void one(llvm::StringRef text) {
    word(text.size());
    if (!text.empty()) word(llvm::xxh3_64bits(text));
  }
  void one(const std::string& text) { one(llvm::StringRef(text)); }
  void one(llvm::hash_code code) { word(static_cast<std::size_t>(code)); }
  template <class T>
  requires std::is_integral_v<T> || std::is_enum_v<T>
  void one(T value) { word(static_cast<std::uint64_t>(value)); }

  std::uint64_t state_ = 0xCBF29CE484222325ull;
};

const void* attributesOf(const llvm::AttributeList& list) { return list.getRawPointer(); }

// The order of a value's use list, by the addresses of its Use slots. It is
// not in the IR text, but passes that walk users (globalopt over a global's
// users, for one) follow it, and a pass can reorder it, or add users that
// are dead constants left in the context, while claiming no change: such a
// module would step differently from the one read back from its bitcode.
void addUseList(Hasher& h, const llvm::Value& value) {
  h.add(value.getNumUses());
  for (const llvm::Use& use : value.uses()) h.add(static_cast<const void*>(&use));
}

void addMetadata(Hasher& h, const llvm::Instruction& inst,
                 llvm::SmallVectorImpl<std::pair<unsigned, llvm::MDNode*>>& scratch) {
  scratch.clear();
  inst.getAllMetadata(scratch);  // includes !dbg
  for (const auto& [kind, node] : scratch) h.add(kind, static_cast<const void*>(node));
}

void addGlobal(Hasher& h, const llvm::GlobalValue& global) {
  addUseList(h, global);
  h.add(global.getName(), static_cast<unsigned>(global.getLinkage()),
        static_cast<unsigned>(global.getVisibility()),
        static_cast<unsigned>(global.getUnnamedAddr()), global.getAddressSpace(),
        static_cast<const void*>(global.getComdat()), global.isDSOLocal());
  llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> attached;
  if (const auto* object = llvm::dyn_cast<llvm::GlobalObject>(&global)) {
    object->getAllMetadata(attached);
    for (const auto& [kind, node] : attached) h.add(kind, static_cast<const void*>(node));
    h.add(object->getAlign() ? object->getAlign()->value() : 0, object->getSection());
  }
}

// Constants (other than globals, hashed with the module) are uniqued in the
// context and shared by every user, so each one's use list is hashed once.
void addConstantUseList(Hasher& h, const llvm::Value* value,
                        llvm::SmallPtrSetImpl<const llvm::Value*>& seen) {
  if (!llvm::isa<llvm::Constant>(value) || llvm::isa<llvm::GlobalValue>(value)) return;
  if (seen.insert(value).second) addUseList(h, *value);
}

void addFunction(Hasher& h, const llvm::Function& function,
                 llvm::SmallPtrSetImpl<const llvm::Value*>& seenConstants) {
  addGlobal(h, function);
  h.add(attributesOf(function.getAttributes()), static_cast<unsigned>(function.getCallingConv()),
        function.hasGC() ? function.getGC() : std::string());
  for (const llvm::Argument& arg : function.args()) {
    h.add(arg.getName());
    addUseList(h, arg);
  }
  llvm::SmallVector<std::pair<unsigned, llvm::MDNode*>, 4> scratch;
  for (const llvm::BasicBlock& block : function) {
    h.add(static_cast<const void*>(&block), block.getName(), block.size());
    addUseList(h, block);  // the "; preds" order in the text
    for (const llvm::Instruction& inst : block) {
      h.add(static_cast<const void*>(&inst), inst.getOpcode(),
            static_cast<const void*>(inst.getType()), inst.getName(),
            inst.getRawSubclassOptionalData(), inst.getNumOperands());
      addUseList(h, inst);
      // Operands by identity: any change of what an operand is, or of the
      // order of instructions, changes the sequence of addresses hashed.
      for (const llvm::Value* operand : inst.operand_values()) {
        h.add(static_cast<const void*>(operand));
        addConstantUseList(h, operand, seenConstants);
      }
      addMetadata(h, inst, scratch);
      if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
        h.add(attributesOf(call->getAttributes()), static_cast<unsigned>(call->getCallingConv()),
              static_cast<const void*>(call->getFunctionType()));
      } else if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) {
        h.add(load->getAlign().value(), load->isVolatile(),
              static_cast<unsigned>(load->getOrdering()));
      } else if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
        h.add(store->getAlign().value(), store->isVolatile(),
              static_cast<unsigned>(store->getOrdering()));
      } else if (const auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst)) {
        h.add(alloca->getAlign().value(), static_cast<const void*>(alloca->getAllocatedType()));
      } else if (const auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) {
        h.add(static_cast<const void*>(gep->getSourceElementType()));
      } else if (const auto* phi = llvm::dyn_cast<llvm::PHINode>(&inst)) {
        for (const llvm::BasicBlock* incoming : phi->blocks()) {
          h.add(static_cast<const void*>(incoming));
        }
      } else if (const auto* cmp = llvm::dyn_cast<llvm::CmpInst>(&inst)) {
        h.add(static_cast<unsigned>(cmp->getPredicate()));
      } else if (const auto* shuffle = llvm::dyn_cast<llvm::ShuffleVectorInst>(&inst)) {
        h.add(llvm::hash_combine_range(shuffle->getShuffleMask().begin(),
                                       shuffle->getShuffleMask().end()));
      } else if (const auto* extract = llvm::dyn_cast<llvm::ExtractValueInst>(&inst)) {
        h.add(llvm::hash_combine_range(extract->idx_begin(), extract->idx_end()));
      } else if (const auto* insert = llvm::dyn_cast<llvm::InsertValueInst>(&inst)) {
        h.add(llvm::hash_combine_range(insert->idx_begin(), insert->idx_end()));
      } else if (const auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&inst)) {
        h.add(static_cast<unsigned>(rmw->getOperation()), static_cast<unsigned>(rmw->getOrdering()),
              rmw->isVolatile(), rmw->getAlign().value());
      } else if (const auto* cmpxchg = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&inst)) {
        h.add(static_cast<unsigned>(cmpxchg->getSuccessOrdering()),
              static_cast<unsigned>(cmpxchg->getFailureOrdering()), cmpxchg->isVolatile(),
              cmpxchg->isWeak(), cmpxchg->getAlign().value());
      } else if (const auto* fence = llvm::dyn_cast<llvm::FenceInst>(&inst)) {
        h.add(static_cast<unsigned>(fence->getOrdering()));
      } else if (const auto* pad = llvm::dyn_cast<llvm::LandingPadInst>(&inst)) {
        h.add(pad->isCleanup());
      }
      if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
        h.add(static_cast<unsigned>(call->getTailCallKind()));
      }
    }
  }
}

}  // namespace

std::uint64_t moduleFingerprint(const llvm::Module& module) {
  Hasher h;
  h.add(module.getTargetTriple(), module.getDataLayoutStr(), module.getModuleInlineAsm());
  for (const llvm::GlobalVariable& global : module.globals()) {
    addGlobal(h, global);
    h.add(global.isConstant(), static_cast<const void*>(global.getValueType()),
          global.hasInitializer() ? static_cast<const void*>(global.getInitializer()) : nullptr,
          static_cast<unsigned>(global.getThreadLocalMode()), global.isExternallyInitialized());
  }
  for (const llvm::GlobalAlias& alias : module.aliases()) {
    addGlobal(h, alias);
    h.add(static_cast<const void*>(alias.getAliasee()));
  }
  for (const llvm::GlobalIFunc& ifunc : module.ifuncs()) {
    addGlobal(h, ifunc);
    h.add(static_cast<const void*>(ifunc.getResolver()));
  }
  llvm::SmallPtrSet<const llvm::Value*, 32> seenConstants;
  for (const llvm::Function& function : module) addFunction(h, function, seenConstants);
  for (const llvm::NamedMDNode& named : module.named_metadata()) {
    h.add(named.getName(), named.getNumOperands());
    for (const llvm::MDNode* node : named.operands()) h.add(static_cast<const void*>(node));
  }
  return h.value();
}

}  // namespace kiln::llvm_engine
