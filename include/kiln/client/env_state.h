// An episode's state written down as CompilerGym's CompilerEnvState: the
// benchmark, the actions that led there as a command line, the episode's
// walltime and its reward. Read and written as CompilerGym's CSV
// (`benchmark,reward,walltime,commandline`, RFC 4180), so that files move
// between kiln, kiln's Python (kiln.CompilerEnvState) and CompilerGym.
// Pure text processing: no LLVM, no I/O but the two file helpers.
//
// kiln writes a commandline as the action names in order, separated by
// single spaces ("mem2reg gvn instcombine"). It also reads CompilerGym's own
// form, "opt -mem2reg -gvn input.bc -o output.bc": the program, the input and
// the output are dropped and each flag is looked up in an action space's
// names and aliases when one is given (else kept as written, for the env to
// resolve when it replays the state). And the form kiln.compiler_gym's
// env.commandline() and state.commandline write, one opt-19 run per action
// chained through pipes, "opt-19 -passes=mem2reg input.bc -o - | opt-19
// -passes='early-cse<memssa>' - -o output.bc": each stage's pipeline is an
// action, looked up by the pipeline the action space's metadata gives it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/space.h>
#include <kiln/status.h>

namespace kiln::client {

struct EnvState {
  std::string benchmark;             // URI, e.g. benchmark://kiln-bench-v0/qsort
  std::vector<std::string> actions;  // action names (or aliases), in order
  double walltime = 0;               // seconds the episode took
  std::optional<double> reward;      // the episode's cumulative reward; none if untracked
  // What validating the state found (`kiln eval`): one of kValidityWords,
  // or empty when nobody checked. Its own column, after CompilerGym's four.
  std::string validity;

  // The action names separated by single spaces ("" for no action).
  std::string commandline() const;
  bool operator==(const EnvState&) const = default;
};

// What a reader accepts: a commandline of at most this many bytes and
// actions (a longer one is refused, naming its line), a file of at most
// this many bytes.
inline constexpr std::size_t kMaxCommandlineBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxCommandlineActions = 10'000;
inline constexpr std::uint64_t kMaxStatesFileBytes = std::uint64_t{256} << 20;

// "benchmark,reward,walltime,commandline" (CompilerGym's column order).
std::string_view statesCsvHeader();
// The fifth column kiln writes when a state's validity is known; CompilerGym
// reads columns by name and leaves it.
inline constexpr std::string_view kValidityColumn = "validity";
inline constexpr std::array<std::string_view, 4> kValidityWords = {"valid", "verified-only",
                                                                   "invalid", "unvalidated"};

// One CSV record (with its "\n"): quoted where RFC 4180 needs it, numbers in
// the shortest form that reads back exactly ("1.0", "0.25", "1e-05"), the
// reward empty when there is none. As Python's csv.writer writes them.
std::string toCsvRow(const EnvState& state, bool withValidity = false);
// The header (with the validity column when any state has a validity),
// then one record per state.
std::string toCsv(std::span<const EnvState> states);

// The actions of `commandline`, in any form above. With `actions`, every
// name, flag or pipeline must be one of its choices (findAction) and comes
// back as the choice's name; an unknown one is invalid-argument naming it
// and the nearest names. Without, a chain's stages come back as their
// pipelines. Empty text is no action. Refused: more than
// kMaxCommandlineBytes or kMaxCommandlineActions, control characters, a
// `-passes=` form that is not one `-passes=` per piped stage, a `-o`
// without a file.
Result<std::vector<std::string>> parseCommandline(std::string_view commandline,
                                                  const Space* actions = nullptr);

// The choice of `space` named `word`: by name or alias (Space::findChoice),
// else the action whose pipeline (the space's metadata "pipelines", the
// llvm type's) is `word` ("early-cse<memssa>"); else findChoice's error.
Result<std::int64_t> findAction(const Space& space, std::string_view word);

// Every state of a CSV text. The header is optional (without it the columns
// are in CompilerGym's order); with it, columns are found by name in any
// order, as CompilerGym's reader does, and a validity column is read too. Empty lines are skipped.
// A bad record is invalid-argument "line N: <what is wrong>": a wrong number of columns, an
// unterminated quote, a reward or walltime that is not a finite number (or a negative walltime), an
// empty benchmark, a bad commandline.
Result<std::vector<EnvState>> parseStatesCsv(std::string_view text, const Space* actions = nullptr);

// parseStatesCsv of a file of at most kMaxStatesFileBytes; errors name the file.
Result<std::vector<EnvState>> readStatesFile(const std::filesystem::path& path,
                                             const Space* actions = nullptr);
// Writes toCsv(states) to `path` (replacing it).
Status writeStatesFile(const std::filesystem::path& path, std::span<const EnvState> states);

}  // namespace kiln::client
