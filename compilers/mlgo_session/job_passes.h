// The passes a job's `-passes=<pipeline>` may name: an allow-list, not a
// deny-list, because LLVM's registry holds passes that write files (dot-*,
// insert-gcov-profiling with the module's !llvm.gcov), start programs
// (view-*) or read files their parameters name (memprof-use<profile-filename=>),
// and the next LLVM may add more. Allowed:
// - every action of the llvm session type (docs/actions.md, both spaces)
//   and every pass such an action runs, with the pass's own parameters;
// - the standard pipelines default<L>, thinlto-pre-link<L>, thinlto<L>,
//   lto-pre-link<L>, lto<L> with L one of O0..O3, Os, Oz (what ml-compiler-opt's
//   corpus builds run);
// - the pass-manager nestings module(...), cgscc(...), function(...),
//   function<eager-inv>(...), loop(...), loop-mssa(...), devirt<N>(...),
//   repeat<N>(...) with N up to 100.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln::llvm_engine {
class PassTable;
}

namespace kiln::mlgo_session {

class JobPasses {
 public:
  // The actions of `table` and the passes they run.
  static JobPasses fromTable(const llvm_engine::PassTable& table);
  // Exactly `names` (tests).
  static JobPasses of(std::set<std::string, std::less<>> names);

  bool allows(std::string_view name) const { return names_.count(name) != 0; }

  // ok when every name in `pipeline` (opt's -passes= text) is allowed and
  // the text has the grammar opt reads (name[<params>][(pipeline)], comma
  // separated); invalid-argument naming the first pass that is not.
  Status check(std::string_view pipeline) const;

 private:
  std::set<std::string, std::less<>> names_;
};

}  // namespace kiln::mlgo_session
