// What a benchmark binary may use when it runs (policy, no processes): the
// operator's ceilings, set by flags, and the lower limits a client may ask
// for. A client never raises a limit: lowered() refuses a value above the
// operator's, naming the flag that sets it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln::sandbox {

struct SandboxLimits {
  // Each run's wall time; past it every process of the run is killed.
  std::chrono::milliseconds wallTime{10'000};
  // The address space of each process (RLIMIT_AS). Sanitizer builds reserve
  // terabytes of shadow memory, so for them the limit is their allocator's
  // resident-memory ceiling instead (ASAN_OPTIONS=hard_rss_limit_mb).
  std::uint64_t memoryBytes = std::uint64_t{1} << 30;
  // Processes and threads alive at once inside one sandbox (a fork bomb
  // stops here, not at the host's limit).
  std::uint32_t processes = 32;
  // What is kept of stdout and of stderr each; the rest is read and counted.
  std::uint64_t outputBytes = 64 * 1024;
  // The writable scratch directory's size (a tmpfs), and the largest file.
  std::uint64_t scratchBytes = 64 * 1024 * 1024;

  bool operator==(const SandboxLimits&) const = default;
};

// The flags that set the operator's ceilings, one per field (for messages).
inline constexpr std::string_view kWallTimeFlag = "--sandbox-wall-ms";
inline constexpr std::string_view kMemoryFlag = "--sandbox-memory-mb";
inline constexpr std::string_view kProcessesFlag = "--sandbox-processes";
inline constexpr std::string_view kOutputFlag = "--sandbox-output-kb";
inline constexpr std::string_view kScratchFlag = "--sandbox-scratch-mb";

// Start-up check of the operator's limits: invalid-argument naming the flag
// whose value is out of range.
Status checkLimits(const SandboxLimits& limits);

// `ceiling` with the one field `key` (sandbox.wall_ms, sandbox.memory_mb,
// sandbox.processes, sandbox.output_kb, sandbox.scratch_mb) set to `value`,
// a client's request: invalid-argument for a value that is not a positive
// whole number, permission-denied above the operator's ceiling, not-found
// for an unknown key.
Result<SandboxLimits> lowered(const SandboxLimits& current, const SandboxLimits& ceiling,
                              std::string_view key, std::string_view value);

// "10000 ms, 1024 MiB, 32 processes, 64 KiB of output, 64 MiB of scratch".
std::string describe(const SandboxLimits& limits);

}  // namespace kiln::sandbox
