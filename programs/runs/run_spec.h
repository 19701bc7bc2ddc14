// How a benchmark runs: its inputs (arguments and stdin, each one run of the
// program) and the system libraries it links. Data only: the program runs in
// the sandbox whatever its arguments say, and libraries are names from a
// fixed list, never linker flags. kiln-bench-v0 and csmith programs have
// their own specs; a client gives one for its session's benchmark (the
// llvm.run_spec parameter); a corpus module may have one beside it
// (<module>.run.json, programs/datasets/corpus_index.h). The JSON form:
//   {"inputs": [{"args": ["1"], "stdin": "text"}, {"args": []}],
//    "libraries": ["m"]}
// A corpus's spec may take an input's stdin from a file of the corpus
// instead ({"stdin_file": "inputs/large.txt"}); a client's may not name
// files at all.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::runs {

struct ProgramInput {
  std::vector<std::string> args;  // after argv[0]
  std::string stdinBytes;
  bool operator==(const ProgramInput&) const = default;
};

struct RunSpec {
  std::vector<ProgramInput> inputs;    // the first is the one Runtime times
  std::vector<std::string> libraries;  // "m" links -lm
  bool operator==(const RunSpec&) const = default;
};

// Bounds on a spec from outside (a file, a client).
inline constexpr std::size_t kMaxInputs = 16;
inline constexpr std::size_t kMaxArgs = 64;
inline constexpr std::size_t kMaxArgBytes = 4096;
inline constexpr std::size_t kMaxStdinBytes = 1 << 20;
inline constexpr std::size_t kMaxSpecBytes = 4 << 20;

// The libraries a spec may name.
bool isAllowedLibrary(std::string_view name);

// Reads the file an input's "stdin_file" names (at most kMaxStdinBytes).
using InputFileReader = std::function<Result<std::string>(const std::string& name)>;

// invalid-argument naming `what` and the first thing wrong: not JSON, an
// unknown member, a wrong type, a bound exceeded, a library not allowed, no
// input at all, a "stdin_file" without `readInputFile` or that it cannot read.
Result<RunSpec> parseRunSpec(std::string_view json, std::string_view what,
                             const InputFileReader& readInputFile = nullptr);

// kiln-bench-v0's programs: no argument, then the alternative inputs 1, 2
// and 3 (each prints one line); all link libm.
RunSpec kilnBenchRunSpec();

// A csmith program: no input; it prints its checksum.
RunSpec csmithRunSpec();

// "input 2 (args: 1)" / "input 1 (no args, 12 bytes of stdin)", for messages.
std::string describeInput(const RunSpec& spec, std::size_t index);

}  // namespace kiln::runs
