#include "bench/kiln_executable.h"

#include "tests/support/child_cluster.h"

namespace kiln::bench {

std::filesystem::path kilnExecutable() {
  const std::filesystem::path self = testsupport::selfExecutable();
  if (self.filename() == "kiln") return self;
  return self.parent_path() / "kiln";
}

}  // namespace kiln::bench
