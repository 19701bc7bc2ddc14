// Target machines and in-process code generation. Initializes LLVM's native
// target once per process, builds a TargetMachine the way opt-19 does for a
// module (module triple, generic CPU, no extra features) and emits an object
// file into memory to measure its .text size, without any subprocess.
#pragma once

#include <cstdint>
#include <memory>

#include <kiln/status.h>

namespace llvm {
class Module;
class TargetMachine;
namespace object {
class ObjectFile;
}  // namespace object
}  // namespace llvm

namespace kiln::llvm_engine {

// Thread-safe; every caller of the functions below goes through it.
void initializeNativeTargetOnce();

// The TargetMachine opt-19 would build for `module`: its triple (the host's
// default triple if it has none), CPU "" and features "" (function attributes
// such as "target-cpu" still apply per function). nullptr when the module's
// target is not compiled into this LLVM or is not the host's architecture
// family (passes then run without target information, as in opt).
std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const llvm::Module& module);

// Compiles a copy of `module` (the module itself is left untouched) to an
// in-memory object at the default codegen level (llc -O2) and returns the sum
// of the sizes of its ".text" / ".text.*" sections. Platform dependent.
Result<std::int64_t> objectTextSizeBytes(const llvm::Module& module);

// The object file of a copy of `module`, as objectTextSizeBytes compiles
// it: what a benchmark's executable is linked from. `addressSanitizer`
// instruments every function with ASan first (link with -fsanitize=address).
// compile-error when the backend reports one; a crash inside LLVM is caught.
// Runs on a thread of its own that Landlock lets open no file (where the
// kernel has Landlock): the module's assembly is a client's.
Result<std::string> emitObject(const llvm::Module& module, bool addressSanitizer);

// The sum of the sizes of an object's ".text" / ".text.*" sections: what
// kiln calls the native (code) size everywhere.
std::int64_t textSectionBytes(const llvm::object::ObjectFile& object);

}  // namespace kiln::llvm_engine
