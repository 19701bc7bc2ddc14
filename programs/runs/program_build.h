// Links a benchmark's compiled module (an object file, from in-process code
// generation) into an executable with the operator's linker driver (clang-19
// by default, a flag away): the module's code as the optimizer left it, the
// spec's system libraries, and ASan's runtime for a sanitizer build.
// Mechanism: a bounded child process (programs/make/llvm_tools.h).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include <kiln/status.h>
#include "programs/make/llvm_tools.h"
#include "programs/runs/run_spec.h"

namespace kiln::runs {

struct LinkSettings {
  std::string driver = "clang-19";  // the operator's --runtime-linker
  programs::ToolLimits limits{std::chrono::milliseconds(60'000), std::uint64_t{2} << 30};
};

struct BuiltProgram {
  std::filesystem::path executable;
  std::chrono::nanoseconds linkTime{0};
};

// Writes `object` to `directory`/<name>.o and links `directory`/<name>.
// compile-error with the linker's trimmed diagnostics when it fails (a
// module without main, an undefined symbol); not-found without the driver.
Result<BuiltProgram> linkProgram(std::string_view object, const RunSpec& spec, bool asan,
                                 const std::filesystem::path& directory, std::string_view name,
                                 const LinkSettings& settings);

}  // namespace kiln::runs
