// The job spec a client sends as the action of an `mlgo-compile` session
// (compilers/mlgo_session/pipeline.h `parseJobSpec`, llvm::json underneath) and the opt
// flags a job may carry (`allowedFlag`). The first input byte picks which;
// the rest is the JSON text or the flag. Nothing is run. Properties checked:
// a refusal is invalid-argument; an accepted spec starts with the load step,
// stays within the step, timeout and memory bounds, and every compile flag
// in it is one allowedFlag accepts; every accepted flag is safe on opt's
// command line (one argument, no file, plugin or response file), and every
// pass an accepted pipeline names is on an allow-list the harness builds
// itself from the llvm type's action table (its actions and the passes they
// run), the standard pipelines at a level, or a pass-manager nesting. A
// deny-list of names cannot say what a pass does with a module's contents
// (insert-gcov-profiling writes where the module's !llvm.gcov says): only
// membership in what was reviewed can. What an allowed pass does with a
// hostile module is the module checks' and the sandbox's to bound.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "compilers/llvm_engine/pass_table.h"
#include "compilers/mlgo_session/pipeline.h"

namespace {

namespace ms = kiln::mlgo_session;

// The passes a worker's mlgo context allows, built once (LLVMFuzzerInitialize).
const ms::JobPasses* jobPasses = nullptr;
// The harness's own allow-list, from the same action table but not through
// JobPasses: the pass names an accepted pipeline may hold.
const std::set<std::string, std::less<>>* reviewedPasses = nullptr;

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_job_spec: property violated: %s\n", what);
    std::abort();
  }
}

// One element of an accepted pipeline: a reviewed pass, a standard pipeline
// at a level, or a pass-manager nesting (an empty word: between ')' and ','
// or ')' and ')').
void requireReviewed(std::string_view word) {
  if (word.empty()) return;
  const std::size_t open = word.find('<');
  const std::string_view name = word.substr(0, open);
  const std::string_view params =
      open == std::string_view::npos ? std::string_view() : word.substr(open + 1);
  for (std::string_view nesting :
       {"module", "cgscc", "function", "loop", "loop-mssa", "devirt", "repeat"}) {
    if (name == nesting) return;
  }
  for (std::string_view standard :
       {"default", "thinlto-pre-link", "thinlto", "lto-pre-link", "lto"}) {
    if (name != standard) continue;
    for (std::string_view level : {"O0>", "O1>", "O2>", "O3>", "Os>", "Oz>"}) {
      if (params == level) return;
    }
    require(false, "an accepted pipeline runs a standard pipeline at no level");
  }
  require(reviewedPasses->count(name) != 0,
          "an accepted pipeline names a pass that is not on the reviewed allow-list");
}

// Checked independently of allowedFlag's own parsing: what would let a job
// reach beyond its private directory through opt's command line.
void requireSafeFlag(std::string_view flag) {
  require(flag.size() >= 2 && flag[0] == '-' && flag[1] != '-', "an accepted flag is not -name");
  for (char c : flag) {
    const auto byte = static_cast<unsigned char>(c);
    require(byte > ' ' && byte < 0x7f, "an accepted flag has a space, control or non-ASCII byte");
    require(c != '/' && c != '\\' && c != '@' && c != '$' && c != '\'' && c != '"',
            "an accepted flag has a path, response-file or shell character");
  }
  for (std::string_view refused : {"-load", "-o", "-f", "-p", "-mllvm", "-S"}) {
    if (flag.starts_with(refused) && !flag.starts_with("-passes=")) {
      require(false, "an accepted flag loads a plugin, names an output or sets an option");
    }
  }
  if (!flag.starts_with("-passes=")) return;
  // The words between the pipeline's punctuation, each maybe with <params>.
  std::string_view pipeline = flag.substr(8);
  std::size_t start = 0;
  while (start <= pipeline.size()) {
    std::size_t end = pipeline.find_first_of(",()", start);
    if (end == std::string_view::npos) end = pipeline.size();
    requireReviewed(pipeline.substr(start, end - start));
    start = end + 1;
  }
}

void checkSpec(std::string_view json) {
  auto spec = ms::parseJobSpec(json, *jobPasses);
  if (!spec.ok()) {
    require(spec.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused spec is not invalid-argument");
    return;
  }
  require(spec->steps.size() >= 2 && spec->steps.size() <= 33, "an accepted spec's step count");
  require(spec->steps[0]->name() == "load", "an accepted spec does not start with the load step");
  for (std::size_t i = 1; i < spec->steps.size(); ++i) {
    std::string name = spec->steps[i]->name();
    require(name != "load", "a spec's own step is a load step");
    if (!name.starts_with("compile ")) continue;
    // A flagless compile step runs at the module's own -O level (its .cmd)
    // and says so in its name instead of listing flags.
    if (name.starts_with("compile (")) continue;
    // A compile step's name lists its flags, each without spaces.
    std::string_view flags = std::string_view(name).substr(8);
    std::size_t count = 0;
    while (!flags.empty()) {
      std::size_t space = flags.find(' ');
      std::string_view flag = flags.substr(0, space);
      require(ms::allowedFlag(flag, *jobPasses).ok(),
              "a compile step holds a flag allowedFlag refuses");
      requireSafeFlag(flag);
      ++count;
      flags = space == std::string_view::npos ? std::string_view() : flags.substr(space + 1);
    }
    require(count >= 1 && count <= 64, "a compile step's flag count");
  }
  if (spec->timeout) {
    require(spec->timeout->count() >= 1 && spec->timeout->count() <= 3'600'000,
            "an accepted timeout is out of bounds");
  }
  if (spec->memoryLimitBytes) {
    require(*spec->memoryLimitBytes >= (std::uint64_t{1} << 20) &&
                *spec->memoryLimitBytes <= (std::uint64_t{1} << 40),
            "an accepted memory limit is out of bounds");
  }
}

void checkFlag(std::string_view flag) {
  kiln::Status allowed = ms::allowedFlag(flag, *jobPasses);
  if (!allowed.ok()) {
    require(allowed.code() == kiln::ErrorCode::kInvalidArgument,
            "a refused flag is not invalid-argument");
    return;
  }
  requireSafeFlag(flag);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto table = kiln::llvm_engine::PassTable::fromRegistry();
  require(table.ok(), "the pass table builds");
  static const ms::JobPasses passes = ms::JobPasses::fromTable(**table);
  jobPasses = &passes;
  static std::set<std::string, std::less<>> reviewed;
  for (const kiln::llvm_engine::PassInfo& action : (*table)->passes()) {
    reviewed.insert(action.name);
    reviewed.insert(action.runs.begin(), action.runs.end());
  }
  // The list itself holds nothing known to touch files or start programs:
  // a pass added to the action table that does is caught here at once.
  for (const std::string& name : reviewed) {
    for (std::string_view bad : {"view-", "dot-", "insert-gcov", "memprof", "pgo-",
                                 "sample-profile", "print", "require", "invalidate"}) {
      require(!std::string_view(name).starts_with(bad),
              "the action table holds a pass that touches files or starts programs");
    }
  }
  reviewedPasses = &reviewed;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    checkSpec(text);
  } else {
    checkFlag(text);
  }
  return 0;
}
