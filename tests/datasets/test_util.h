// Helpers for datasets tests: a temporary directory removed at the end of the
// test, and one-line file writes.
#pragma once

#include <string>

#include "programs/bundled/kiln_bench_v0.h"
#include "tests/support/scratch_dir.h"

namespace kiln::datasets::testing {

// Each test's files, removed at its end.
class TempDir : public testsupport::ScratchDir {
 public:
  explicit TempDir(const std::string& prefix = "kiln-datasets") : ScratchDir(prefix) {}
};
using testsupport::readFile;
using testsupport::writeFile;

// Real bitcode to put into test corpora: one of the embedded programs.
inline std::string sampleBitcode() {
  const auto* program = bundled::findKilnBenchV0("crc32");
  return std::string(reinterpret_cast<const char*>(program->bitcode.data()),
                     program->bitcode.size());
}

}  // namespace kiln::datasets::testing
