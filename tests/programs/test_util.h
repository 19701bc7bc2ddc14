// Helpers of the programs tests: a temporary directory removed at the end of
// the test, file writes, and commands run with a deadline.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/process/subprocess.h"
#include "tests/support/scratch_dir.h"

namespace kiln::programs::testing {

// Each test's files, removed at its end.
class TempDir : public testsupport::ScratchDir {
 public:
  TempDir() : ScratchDir("kiln-programs") {}
};
using testsupport::readFile;
using testsupport::writeFile;

// Runs a tool of the test (cmake, make, bear) to completion within two minutes.
inline ::testing::AssertionResult runTool(const std::vector<std::string>& argv,
                                          const std::filesystem::path& directory = {}) {
  SubprocessOptions options;
  options.workingDirectory = directory;
  auto ran = runSubprocess(argv, std::chrono::minutes(2), options);
  if (!ran.ok()) return ::testing::AssertionFailure() << argv[0] << ": " << ran.status().toString();
  if (!ran->status.success()) {
    return ::testing::AssertionFailure() << argv[0] << " " << ran->status.describe() << ":\n"
                                         << ran->stderrText << ran->stdoutText;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace kiln::programs::testing
