// Runs one new-pass-manager pipeline over a module the way one `opt-19
// -passes=<pipeline>` invocation does: the same text parsed by the same
// PassBuilder (so a bare pass name gets the adaptor and the parameters opt
// gives it), fresh analysis managers (so a result depends only on the IR,
// never on what ran before), opt's standard instrumentation (optnone
// functions are skipped), the module's target library info and, when the
// module names an architecture (as opt), a TargetMachine for target hooks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::llvm_engine {

// Parses `pipeline` (PassBuilder syntax, exactly as `opt -passes=` takes it)
// and runs it. Returns invalidArgument if the text does not parse. Not
// guarded: callers wrap it in runGuarded(). `allPreserved` (optional)
// receives whether every pass reported that it preserved all analyses, i.e.
// claimed not to have touched the IR.
Status runPipeline(llvm::Module& module, llvm::TargetMachine* tm, std::string_view pipeline,
                   bool* allPreserved = nullptr);

// The transformation passes `pipeline` runs, each name once in the order of
// first use, parameters and adaptors left out ("licm" -> {"licm"};
// "scc-oz-module-inliner" -> {"inline", "function-attrs", "sroa", ...}).
// Analysis requests (require<>, invalidate<>) are not passes. Read from what
// LLVM prints for the parsed pipeline: only to inspect it, never to run it
// (printing drops parameters, e.g. -Oz's inline threshold).
// invalidArgument if the text does not parse.
Result<std::vector<std::string>> passesRunBy(std::string_view pipeline);

}  // namespace kiln::llvm_engine
