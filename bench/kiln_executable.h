// The kiln binary a benchmark starts its cluster processes with: the `kiln`
// beside kiln-bench (benchmarks are not in the kiln binary itself), or the
// running program when that is kiln.
#pragma once

#include <filesystem>

namespace kiln::bench {

std::filesystem::path kilnExecutable();

}  // namespace kiln::bench
