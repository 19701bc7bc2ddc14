// Runs one new-pass-manager pipeline over a module the way one `opt-19
// -passes=<pipeline>` invocation does: fresh analysis managers (so a result
// depends only on the IR, never on what ran before), opt's standard
// instrumentation (optnone functions are skipped), the module's target
// library info and, when available, a TargetMachine for target hooks.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::llvmenv {

// Parses `pipeline` (PassBuilder syntax) and runs it. Returns invalidArgument
// if the text does not parse. Not guarded: callers wrap it in runGuarded().
// `allPreserved` (optional) receives whether every pass reported that it
// preserved all analyses, i.e. claimed not to have touched the IR.
Status runPipeline(llvm::Module& module, llvm::TargetMachine* tm, std::string_view pipeline,
                   bool* allPreserved = nullptr);

// Parses `pipeline` without running it and returns the fully explicit form
// that opt's -print-pipeline-passes would print (e.g. "licm" becomes
// "function(loop-mssa(licm<allowspeculation>))").
Result<std::string> canonicalPipeline(std::string_view pipeline);

}  // namespace kiln::llvmenv
