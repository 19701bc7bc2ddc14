#include "compilers/llvm_engine/module_shape.h"

#include "compilers/llvm_engine/inst_count.h"
#include "llvm/IR/Module.h"

namespace kiln::llvm_engine {

ModuleShape moduleShape(const llvm::Module& module) {
  ModuleShape shape = computeInstCount(module);  // opcodes, blocks, functions
  shape.push_back(static_cast<std::int64_t>(module.global_size()));
  shape.push_back(static_cast<std::int64_t>(module.alias_size()));
  shape.push_back(static_cast<std::int64_t>(module.ifunc_size()));
  shape.push_back(static_cast<std::int64_t>(module.named_metadata_size()));
  return shape;
}

}  // namespace kiln::llvm_engine
