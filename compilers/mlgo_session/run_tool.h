// Runs one non-interactive compiler command (opt, llc) to completion under a
// deadline, killable at once from another thread through a KillSwitch. Output
// goes to files in the working directory, which are removed afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "compilers/mlgo_session/kill_switch.h"

namespace kiln::mlgo_session {

struct ToolRun {
  std::vector<std::string> argv;
  std::filesystem::path workingDirectory;  // must exist; stderr is captured here
  TimePoint deadline;
  std::optional<std::uint64_t> memoryLimitBytes;
  KillSwitch* killSwitch = nullptr;  // optional
  const Clock* clock = nullptr;      // what `deadline` is measured on; null = steady clock
};

// Ok when the command exits 0. A failing command is a compile-error with its
// stderr tail; one that outlives the deadline is killed (timeout); one killed
// through the switch is a compile-error saying it was cancelled.
Status runTool(const ToolRun& run);

}  // namespace kiln::mlgo_session
