// Helpers for datasets tests: a temporary directory removed at the end of the
// test, and one-line file writes.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "benchmarks/kiln_bench_v0.h"

namespace kiln::datasets::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kiln-datasets-XXXXXX").string();
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

// Real bitcode to put into test corpora: one of the embedded programs.
inline std::string sampleBitcode() {
  const auto* program = benchmarks::findKilnBenchV0("crc32");
  return std::string(reinterpret_cast<const char*>(program->bitcode.data()),
                     program->bitcode.size());
}

}  // namespace kiln::datasets::testing
