#include "compilers/llvm_engine/pass_table.h"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "compilers/llvm_engine/compiler_gym_flags.h"
#include "compilers/llvm_engine/ir_text.h"
#include "compilers/llvm_engine/pass_runner.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

struct Rule {
  std::string_view name;
  std::string_view reason;
  bool crashes = false;  // kept with PassTable::Crashers::kKept
};

// Registry entries that are not useful or not safe as standalone actions.
// The pass list itself comes from LLVM; only these exclusions are written
// down, each with the reason a reviewer needs.
constexpr std::array kDeniedPrefixes = {
    Rule{"print", "printer: writes to stderr, never changes IR"},
    Rule{"dot-", "writes .dot files"},
    Rule{"view-", "opens a viewer"},
    Rule{"verify", "verifier: kiln verifies after every pass anyway"},
    Rule{"invalidate", "analysis invalidation only"},
    Rule{"require", "analysis only"},
    Rule{"no-op-", "does nothing by design"},
    Rule{"trigger-", "crashes or breaks the module on purpose (LLVM self-test)"},
    Rule{"coro-", "coroutine lowering: mandatory frontend lowering, not an optimization"},
    Rule{"objc-arc", "Objective-C ARC runtime specific"},
    Rule{"hipstdpar-", "HIP offloading specific"},
    Rule{"pgo-", "profile-guided instrumentation or needs a profile"},
    Rule{"memprof", "heap profiler instrumentation or needs a profile"},
    Rule{"pseudo-probe", "sample-profiling instrumentation"},
};

constexpr std::array kDeniedNames = {
    // Analyses and reporting that never change IR.
    Rule{"aa-eval", "analysis only"},
    Rule{"pa-eval", "analysis only"},
    Rule{"lint", "analysis only"},
    Rule{"instcount", "analysis only (updates statistics)"},
    Rule{"count-visits", "analysis only (test pass)"},
    Rule{"annotation-remarks", "emits remarks only"},
    Rule{"transform-warning", "emits warnings only"},
    Rule{"recompute-globalsaa", "analysis only"},
    Rule{"check-debugify", "debugify checker (test tool)"},
    Rule{"helloworld", "example pass"},
    // Instrumentation: adds calls into a runtime library or metadata for one.
    Rule{"asan", "sanitizer instrumentation"},
    Rule{"hwasan", "sanitizer instrumentation"},
    Rule{"msan", "sanitizer instrumentation"},
    Rule{"tsan", "sanitizer instrumentation"},
    Rule{"tsan-module", "sanitizer instrumentation"},
    Rule{"dfsan", "sanitizer instrumentation"},
    Rule{"nsan", "sanitizer instrumentation"},
    Rule{"sancov-module", "coverage instrumentation"},
    Rule{"sanmd-module", "sanitizer metadata"},
    Rule{"bounds-checking", "adds run-time checks"},
    Rule{"kcfi", "control-flow-integrity instrumentation"},
    Rule{"cfguard", "Windows control-flow guard"},
    Rule{"cross-dso-cfi", "control-flow-integrity lowering"},
    Rule{"lowertypetests", "control-flow-integrity lowering"},
    Rule{"ee-instrument", "function entry/exit instrumentation"},
    Rule{"insert-gcov-profiling", "coverage instrumentation"},
    Rule{"instrprof", "profile instrumentation lowering"},
    Rule{"instrorderfile", "order-file instrumentation"},
    Rule{"ctx-instr-lower", "contextual profiling lowering"},
    Rule{"sample-profile", "needs a sample profile"},
    Rule{"synthetic-counts-propagation", "writes synthetic profile counts"},
    Rule{"poison-checking", "adds run-time checks"},
    Rule{"jmc-instrumenter", "debugger just-my-code instrumentation"},
    Rule{"debugify", "adds synthetic debug info (test tool)"},
    Rule{"safe-stack", "security instrumentation that needs a runtime"},
    Rule{"stack-protector", "security instrumentation"},
    Rule{"embed-bitcode", "embeds the module into itself"},
    // Need inputs kiln does not have (files, summaries, command-line lists).
    Rule{"function-import", "needs a ThinLTO summary index"},
    Rule{"extract-blocks", "needs a block list file"},
    Rule{"rewrite-symbols", "needs a symbol map file"},
    Rule{"forceattrs", "needs -force-attribute lists"},
    Rule{"internalize", "needs a list of symbols to keep; alone it may internalize main"},
    Rule{"inliner-ml-advisor-release", "needs an ML inlining model"},
    Rule{"wholeprogramdevirt", "LTO-only: needs a whole-program summary"},
    // Non-deterministic across hosts: the result depends on the module's name.
    Rule{"metarenamer", "renames with a seed taken from the module identifier"},
    // Not deterministic from run to run in LLVM 19: the same module and the
    // same pass give different IR (opt-19 run 8 times on kiln-bench-v0:
    // newgvn gives up to 8 different results per program, attributor 2 on
    // kmp and up to 5 after gvn). Found by the soak as replays that diverged:
    // a session that used one could not be restored by replay. gvn-hoist:
    // two random sequences run side by side diverged at it, and opt-19 run
    // 10 times on the state before gave 2 different results (7 and 3).
    // gvn-sink: 7 divergences in 4,000 random sequences run side by side.
    Rule{"newgvn", "not deterministic in LLVM 19: the same input gives different IR"},
    Rule{"attributor", "not deterministic in LLVM 19: the same input gives different IR"},
    Rule{"gvn-hoist", "not deterministic in LLVM 19: the same input gives different IR"},
    Rule{"gvn-sink", "not deterministic in LLVM 19: the same input gives different IR"},
    // Its fixpoint iteration has no time bound a pipeline string can set:
    // after a random sequence (kiln bench actions over kiln-bench-v0) one
    // step took 18.6 s, 0.4 s on the same program fresh; an RL step must not
    // stall a batch that long. attributor-light-cgscc stays.
    Rule{"attributor-cgscc", "unbounded: one step took 18.6 s after a random sequence"},
    // Segfaults inside LLVM 19 (opt-19 too) on valid modules that random
    // sequences reach: `kiln eval --agent random --seed 1 --steps 2000` on
    // kiln-bench-v0 crashed it on adler32, dijkstra, gaussian and nqueens
    // (tests/llvm_engine/data/loop_bound_split_crash.ll is adler32's, reduced).
    // A worker contains the crash (it answers, exits and is replaced), but an
    // agent's step must not cost a worker.
    Rule{"loop-bound-split",
         "crashes LLVM 19 (SIGSEGV, opt-19 too) on valid modules random sequences reach", true},
    // Miscompiles: `kiln eval --agent random` on kiln-bench-v0 left 14 of 25
    // states invalid, each first broken at structurizecfg. The validation
    // campaign with it put back (docs/actions.md, from
    // docs/data/action_validation_put_back.json) pinned 22 of its 28
    // sequences' miscompiles on it, alone or after other passes, on 21
    // programs: kiln-bench-v0/quicksort prints nothing after it alone,
    // csmith-v0/3 a wrong checksum after sroa. LLVM 19's StructurizeCFG
    // mishandles the `switch` every kiln-bench-v0 program has (opt-19 with
    // lower-switch first: the 25 programs validate), and a GPU pass that
    // needs another pass first would not be the pass of its name.
    Rule{"structurizecfg",
         "miscompiles: alone, kiln-bench-v0/quicksort prints nothing where -O0 prints its "
         "checksum; 22 of 28 sequences miscompiled with it put back (validation campaign)"},
    // Backend lowering of the IR codegen pipeline: many need a TargetMachine
    // (crash without one), change the ABI, or only make sense right before
    // instruction selection; codegen runs them anyway.
    Rule{"codegenprepare", "backend lowering (needs a TargetMachine)"},
    Rule{"atomic-expand", "backend lowering (needs a TargetMachine)"},
    Rule{"callbr-prepare", "backend lowering"},
    Rule{"dwarf-eh-prepare", "backend EH lowering (needs a TargetMachine)"},
    Rule{"sjlj-eh-prepare", "changes the EH ABI"},
    Rule{"wasm-eh-prepare", "WebAssembly EH lowering"},
    Rule{"win-eh-prepare", "Windows EH lowering"},
    Rule{"expand-large-div-rem", "backend lowering (needs a TargetMachine)"},
    Rule{"expand-large-fp-convert", "backend lowering (needs a TargetMachine)"},
    Rule{"expand-memcmp", "backend lowering (needs a TargetMachine)"},
    Rule{"indirectbr-expand", "backend lowering (needs a TargetMachine)"},
    Rule{"interleaved-access", "backend lowering (needs a TargetMachine)"},
    Rule{"select-optimize", "backend lowering (needs a TargetMachine)"},
    Rule{"typepromotion", "backend lowering (needs a TargetMachine)"},
    Rule{"pre-isel-intrinsic-lowering", "backend lowering (needs a TargetMachine)"},
    Rule{"lower-emutls", "changes the TLS ABI"},
    Rule{"dxil-upgrade", "DirectX specific"},
    Rule{"gc-lowering", "garbage-collector lowering"},
    Rule{"shadow-stack-gc-lowering", "garbage-collector lowering"},
    Rule{"place-safepoints", "garbage-collector statepoints"},
    Rule{"rewrite-statepoints-for-gc", "garbage-collector statepoints"},
    Rule{"strip-gc-relocates", "garbage-collector statepoints"},
};

// Actions that do not run their bare registry name, each with the reason
// docs/actions.md gives. `registryName` "" adds an action of its own.
struct SpecialAction {
  std::string_view name;          // the action's name
  std::string_view registryName;  // the registry entry it replaces, or ""
  std::string_view pipeline;      // the exact -passes= text it runs
  std::string_view note;
  PassKind kind = PassKind::kFunction;  // for an action of its own
  bool needsBranchTerminators = false;
};

constexpr std::array kSpecialActions = {
    // Bare "instcombine" in -passes turns on fixpoint verification, which
    // calls report_fatal_error when one iteration does not reach a fixpoint
    // (opt-19 stops so on kiln-bench-v0/bfs and csmith-v0/2); the default
    // pipelines run it without.
    SpecialAction{"instcombine", "instcombine", "instcombine<no-verify-fixpoint>",
                  "opt's bare `instcombine` also checks that one iteration reaches a fixpoint "
                  "and stops opt (`LLVM ERROR: Instruction Combining did not reach a fixpoint`) "
                  "when it does not, as on kiln-bench-v0/bfs; LLVM's own pipelines run it "
                  "unchecked. The IR equals opt-19 `-passes=instcombine`'s whenever opt does not "
                  "stop."},
    // unify-loop-exits handles only `br` as the terminator of a loop's
    // exiting block; on a switch LLVM 19 reaches an llvm_unreachable
    // ("unsupported block terminator"), undefined behaviour in a release
    // build: it reads past the heap block of an instruction (valgrind on
    // opt-19), so what it does depends on the heap. Random search saw it
    // crash (SIGSEGV on nqueens) and break the module (quicksort: "PHINode
    // should have one entry for each predecessor"). lower-switch first
    // turns every switch into branches (as the AMDGPU backend does before
    // it); invoke, indirectbr and callbr have no such lowering that keeps
    // behaviour, so a module with one is refused (needsBranchTerminators).
    // Two passes are not the pass `unify-loop-exits` names: the action has
    // a name of its own, and is a pipeline (PassesAndPipelines only).
    SpecialAction{"lower-switch-then-unify-loop-exits", "unify-loop-exits",
                  "lower-switch,unify-loop-exits",
                  "`unify-loop-exits` alone reaches an llvm_unreachable on a loop left through a "
                  "`switch` in LLVM 19 (a SIGSEGV on nqueens, broken PHIs on quicksort): "
                  "`lower-switch` runs first. Refused, the state unchanged, on a module with "
                  "`invoke`, `indirectbr` or `callbr`, which no pass lowers without changing "
                  "behaviour.",
                  PassKind::kFunction, true},
    // LLVM 10's -early-cse-memssa, which CompilerGym had a flag for.
    SpecialAction{"early-cse-memssa", "", "early-cse<memssa>",
                  "CompilerGym's `-early-cse-memssa` (LLVM 10's name for EarlyCSE with "
                  "MemorySSA); LLVM 19 spells it `early-cse<memssa>`."},
};

const SpecialAction* specialFor(std::string_view registryName) {
  for (const SpecialAction& special : kSpecialActions) {
    if (!special.registryName.empty() && special.registryName == registryName) return &special;
  }
  return nullptr;
}

std::optional<PassKind> sectionKind(std::string_view header) {
  if (header.ends_with("analyses:") || header.starts_with("Machine")) return std::nullopt;
  if (header.starts_with("Module passes")) return PassKind::kModule;
  if (header.starts_with("CGSCC passes")) return PassKind::kCgscc;
  if (header.starts_with("Function passes")) return PassKind::kFunction;
  if (header.starts_with("LoopNest passes")) return PassKind::kLoopNest;
  if (header.starts_with("Loop passes")) return PassKind::kLoop;
  return std::nullopt;
}

std::optional<std::string_view> denialReason(std::string_view name, PassTable::Crashers crashers) {
  for (const Rule& rule : kDeniedNames) {
    if (rule.crashes && crashers == PassTable::Crashers::kKept) continue;
    if (name == rule.name) return rule.reason;
  }
  for (const Rule& rule : kDeniedPrefixes) {
    if (name.starts_with(rule.name)) return rule.reason;
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

struct Candidate {
  std::string name;
  PassKind kind;
  const SpecialAction* special = nullptr;  // when the action runs other text
};

// Reads PassBuilder::printPassNames: "Section header:" lines followed by
// indented names; sections "with params" list "name<opt;opt;...>".
std::vector<Candidate> readRegistry(std::vector<DroppedPass>& dropped,
                                    PassTable::Crashers crashers) {
  std::string listing;
  llvm::raw_string_ostream os(listing);
  llvm::PassBuilder().printPassNames(os);
  os.flush();

  std::vector<Candidate> out;
  std::set<std::string, std::less<>> seen;
  std::optional<PassKind> kind;
  std::string_view rest(listing);
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.empty()) continue;
    if (line.front() != ' ') {
      kind = sectionKind(trim(line));
      continue;
    }
    if (!kind) continue;
    std::string_view entry = trim(line);
    const bool withParams = entry.find('<') != std::string_view::npos && entry.back() == '>' &&
                            !entry.starts_with("print") && !entry.starts_with("invalidate") &&
                            !entry.starts_with("verify");
    std::string_view name = withParams ? entry.substr(0, entry.find('<')) : entry;
    if (name.empty() || seen.contains(name)) continue;  // e.g. guard-widening: function first
    seen.emplace(name);
    if (auto reason = denialReason(name, crashers)) {
      dropped.push_back({std::string(name), std::string(*reason)});
      continue;
    }
    if (name.find('<') != std::string_view::npos) {
      dropped.push_back({std::string(name), "analysis-specific variant"});
      continue;
    }
    out.push_back({std::string(name), *kind});
  }
  return out;
}

}  // namespace

std::string_view passKindName(PassKind kind) {
  switch (kind) {
    case PassKind::kModule:
      return "module";
    case PassKind::kCgscc:
      return "cgscc";
    case PassKind::kFunction:
      return "function";
    case PassKind::kLoopNest:
      return "loopnest";
    case PassKind::kLoop:
      return "loop";
  }
  return "?";
}

Result<std::shared_ptr<const PassTable>> PassTable::fromRegistry(Crashers crashers) {
  auto table = std::make_shared<PassTable>();
  std::vector<Candidate> candidates = readRegistry(table->dropped_, crashers);
  for (Candidate& candidate : candidates) candidate.special = specialFor(candidate.name);
  for (const SpecialAction& special : kSpecialActions) {
    if (special.registryName.empty()) {
      candidates.push_back({std::string(special.name), special.kind, &special});
    }
  }
  for (const Candidate& candidate : candidates) {
    PassInfo info{candidate.name, candidate.kind, candidate.name, "", {}, "", false};
    if (const SpecialAction* special = candidate.special) {
      info.name = special->name;
      info.pipeline = special->pipeline;
      info.note = special->note;
      info.needsBranchTerminators = special->needsBranchTerminators;
      if (special->name != candidate.name) {
        table->dropped_.push_back(
            {candidate.name, fmt::format("not safe alone: the action `{}` runs `{}`", special->name,
                                         special->pipeline)});
      }
    }
    Result<std::vector<std::string>> runs = passesRunBy(info.pipeline);
    if (!runs.ok()) {
      // Listed "with params" but unusable without them (e.g. a file name).
      table->dropped_.push_back({candidate.name, "needs mandatory parameters"});
      continue;
    }
    info.runs = std::move(*runs);
    const std::string_view legacy = compilerGymFlagOf(info.name);
    info.flag = legacy.empty() ? "-" + info.name : std::string(legacy);
    table->passes_.push_back(std::move(info));
  }
  if (table->passes_.empty()) return internalError("LLVM's pass registry listed no usable pass");
  // Single passes first, so that the default space is a prefix of the table.
  std::sort(table->passes_.begin(), table->passes_.end(), [](const PassInfo& a, const PassInfo& b) {
    return std::pair(a.isPipeline(), std::string_view(a.name)) <
           std::pair(b.isPipeline(), std::string_view(b.name));
  });
  table->singlePasses_ =
      static_cast<std::size_t>(std::count_if(table->passes_.begin(), table->passes_.end(),
                                             [](const PassInfo& p) { return !p.isPipeline(); }));

  std::string identity = "llvm " LLVM_VERSION_STRING "\n";
  for (const PassInfo& pass : table->passes_) identity += pass.name + "=" + pass.pipeline + "\n";
  for (std::size_t space = 0; space < kActionSpaces.size(); ++space) {
    identity += fmt::format("{} {}\n", kActionSpaces[space].name, table->spaceSize(space));
  }
  table->fingerprint_ = sha1Hex(identity);
  return std::shared_ptr<const PassTable>(std::move(table));
}

std::size_t PassTable::spaceSize(std::size_t space) const {
  switch (space) {
    case 0:
      return singlePasses_;
    case 1:
      return passes_.size();
    default:
      return 0;
  }
}

std::optional<std::size_t> PassTable::find(std::string_view name) const {
  for (std::size_t i = 0; i < passes_.size(); ++i) {
    if (passes_[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace kiln::llvm_engine
