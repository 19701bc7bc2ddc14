// Resets the counters LLVM's symbol tables keep for making names unique.
//
// A symbol table remembers how far it counted suffixes ("cond7"): a pass that
// names values and deletes them again (ipsccp does, while changing nothing)
// leaves the counter raised, and the next pass that needs a unique name
// gets a different suffix ("cond7" instead of "cond5") than it would in a
// module read back from the same bitcode, where every counter starts at 0.
// A state whose next step depended on such invisible history could not be
// reproduced by a cache hit, a fork or a replay on another worker.
#pragma once

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

// Sets the module's and every function's counter back to 0, as after
// reading bitcode. Safe at any time: a counter is only where the search
// for a free suffix starts.
void resetNameCounters(llvm::Module& module);

}  // namespace kiln::llvm_engine
