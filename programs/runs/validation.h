// Whether an optimized program still behaves like its unoptimized self
// (policy: no processes). Each input of the benchmark's run spec ran once in
// the sandbox for the reference build (the benchmark as it came, -O0) and
// once for the candidate (the session's current module, and optionally its
// ASan build); compareRun lists every difference with its evidence.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/process/subprocess.h"
#include "programs/runs/run_spec.h"

namespace kiln::runs {

// What one run of one build did, as the sandbox saw it.
struct RunEvidence {
  ExitStatus status;
  bool timedOut = false;
  std::string stdoutText;  // as much as the sandbox kept
  std::uint64_t stdoutBytes = 0;
  std::string stderrText;
  std::uint64_t peakRssBytes = 0;
};

struct ValidationError {
  enum class Kind {
    kBuildFailed,      // the candidate did not link (or compile)
    kReferenceFailed,  // the unoptimized program itself failed: nothing to compare with
    kTimeout,          // the candidate ran out of its time
    kCrash,            // the candidate died by a signal
    kSanitizer,        // the ASan build reported an error
    kExitStatus,       // a different exit code
    kOutput,           // different output
  };
  Kind kind;
  std::string input;     // describeInput(), empty for the build
  std::string message;   // one line
  std::string evidence;  // what was expected and what came (a few lines)
};

// "build-failed", "reference-failed", "timeout", "crash", "sanitizer", "exit-status", "output".
const char* kindName(ValidationError::Kind kind);

// Differences between the reference's and the candidate's run of input
// `input` (none: the candidate behaves the same). `sanitized`: the candidate
// is the ASan build, whose report on stderr is an error of its own.
std::vector<ValidationError> compareRun(const RunSpec& spec, std::size_t input,
                                        const RunEvidence& reference, const RunEvidence& candidate,
                                        bool sanitized);

}  // namespace kiln::runs
