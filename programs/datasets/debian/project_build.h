// One project's own build, run to record its compiles: the unpacked source is
// copied to a scratch directory (the cached tree stays pristine), the recipe's
// steps (programs/datasets/debian/recipes.h) run there one by one, each bounded in time
// and memory, with all their output appended to one log. Mechanism.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include <kiln/status.h>
#include "programs/datasets/debian/recipes.h"

namespace kiln::debian {

struct BuildLimits {
  std::chrono::seconds perStep{1800};                  // then the step's processes are killed
  std::uint64_t memoryBytes = std::uint64_t{8} << 30;  // RLIMIT_AS of every process of a step
};

struct BuiltProject {
  std::filesystem::path directory;        // where the build ran (in the scratch copy)
  std::filesystem::path compileCommands;  // what it recorded
  std::chrono::milliseconds elapsed{0};
};

// Builds `recipe` from `sourceTree` in `scratch` (emptied first), logging to
// `log`. compile-error naming the step with the log's last lines when a step
// fails or records no compile; timeout when a step runs past the limit;
// not-found when a tool of the toolchain is missing.
Result<BuiltProject> buildProject(const Recipe& recipe, const std::filesystem::path& sourceTree,
                                  const std::filesystem::path& scratch,
                                  const std::filesystem::path& log, const Toolchain& toolchain,
                                  unsigned jobs, const BuildLimits& limits);

// The last `count` lines of a file ("" when it cannot be read).
std::string fileTail(const std::filesystem::path& file, std::size_t count);

}  // namespace kiln::debian
