// What `kiln eval` concludes about a benchmark's final state from the llvm
// session's Validation observation (compilers/llvm_session/llvm_session.h):
// pure, so the rules are tested without a cluster. Every state a session
// reaches has passed LLVM's verifier (a pass that breaks the module fails
// its step), so the verdict is about behaviour: the optimized program run
// on every input of the benchmark's run spec against the benchmark as it
// came (-O0). A benchmark that cannot be run that way (a library module with
// no main, or one whose unoptimized program itself fails) is only verified.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <kiln/client/client.h>
#include <kiln/status.h>

namespace kiln::eval {

enum class Validity {
  kUnvalidated,   // --no-validate: nothing was checked beyond the verifier
  kValid,         // ran on every input, same exit status and output as -O0
  kVerifiedOnly,  // cannot be run against -O0: the IR verifier only
  kInvalid,       // behaves differently from -O0 (or does not build)
};

struct ValidationVerdict {
  Validity validity = Validity::kUnvalidated;
  std::size_t inputs = 0;  // inputs compared (kValid, kInvalid)
  std::string detail;      // why not valid: the first difference, or why it could not run
};

// The verdict from the Validation observation: its JSON when it could be
// had, or the error the session gave. An error that says the benchmark as
// it came does not build or run (invalid-argument) means "verified only";
// any other error is returned, for the caller to count the benchmark as a
// failure (the state could not be checked).
Result<ValidationVerdict> judgeValidation(const Result<std::string>& observation);

// Asks `session` (an llvm session) for the Validation of the state it is in
// and judges it as above: the one way kiln eval, kiln.evaluate's C++ twin
// and the demo validate a state.
Result<ValidationVerdict> validateSessionState(client::Session& session);

// "valid", "verified-only", "invalid", "unvalidated": the word the table,
// the JSON and the states CSV use.
std::string_view validityName(Validity validity);

}  // namespace kiln::eval
