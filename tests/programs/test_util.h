// Helpers of the programs tests: a temporary directory removed at the end of
// the test, file writes, and commands run with a deadline.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"

namespace kiln::programs::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kiln-programs-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void writeFile(const std::filesystem::path& path, const std::string& bytes,
                      bool executable = false) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  if (executable) ::chmod(path.c_str(), 0755);
}

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

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
