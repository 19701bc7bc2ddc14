#include <kiln/sandbox_limits.h>

#include <fmt/format.h>

#include <kiln/parameter_value.h>

namespace kiln::sandbox {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// One limit as a parameter: its key, unit, flag, range, and where it lives.
struct LimitField {
  std::string_view key;
  std::string_view unit;
  std::string_view flag;
  std::uint64_t max;  // in `unit`
  std::uint64_t (*get)(const SandboxLimits&);
  void (*set)(SandboxLimits&, std::uint64_t);
};

constexpr LimitField kFields[] = {
    {"sandbox.wall_ms", "ms", kWallTimeFlag, 3'600'000,
     [](const SandboxLimits& l) { return static_cast<std::uint64_t>(l.wallTime.count()); },
     [](SandboxLimits& l, std::uint64_t v) {
       l.wallTime = std::chrono::milliseconds(static_cast<std::int64_t>(v));
     }},
    {"sandbox.memory_mb", "MiB", kMemoryFlag, 1 << 20,
     [](const SandboxLimits& l) { return l.memoryBytes / kMiB; },
     [](SandboxLimits& l, std::uint64_t v) { l.memoryBytes = v * kMiB; }},
    {"sandbox.processes", "processes", kProcessesFlag, 4096,
     [](const SandboxLimits& l) { return std::uint64_t{l.processes}; },
     [](SandboxLimits& l, std::uint64_t v) { l.processes = static_cast<std::uint32_t>(v); }},
    {"sandbox.output_kb", "KiB", kOutputFlag, 1 << 20,
     [](const SandboxLimits& l) { return l.outputBytes / 1024; },
     [](SandboxLimits& l, std::uint64_t v) { l.outputBytes = v * 1024; }},
    {"sandbox.scratch_mb", "MiB", kScratchFlag, 1 << 20,
     [](const SandboxLimits& l) { return l.scratchBytes / kMiB; },
     [](SandboxLimits& l, std::uint64_t v) { l.scratchBytes = v * kMiB; }},
};

}  // namespace

Status checkLimits(const SandboxLimits& limits) {
  for (const LimitField& field : kFields) {
    const std::uint64_t value = field.get(limits);
    if (value < 1 || value > field.max) {
      return invalidArgument(fmt::format("{} must be in [1, {}] {}, got {}", field.flag, field.max,
                                         field.unit, value));
    }
  }
  return okStatus();
}

Result<SandboxLimits> lowered(const SandboxLimits& current, const SandboxLimits& ceiling,
                              std::string_view key, std::string_view value) {
  for (const LimitField& field : kFields) {
    if (field.key != key) continue;
    KILN_ASSIGN_OR_RETURN(std::uint64_t wanted,
                          parseUnsignedParameter(std::string(key), std::string(value),
                                                 fmt::format("a whole number of {}", field.unit)));
    if (wanted < 1) {
      return invalidArgument(fmt::format("{} must be at least 1 {}", key, field.unit));
    }
    if (wanted > field.get(ceiling)) {
      return aboveCeiling(key, wanted, field.get(ceiling), field.unit,
                          fmt::format("the operator's {}", field.flag));
    }
    SandboxLimits limits = current;
    field.set(limits, wanted);
    return limits;
  }
  return notFound(
      fmt::format("no sandbox limit '{}': the limits are sandbox.wall_ms, sandbox.memory_mb, "
                  "sandbox.processes, sandbox.output_kb and sandbox.scratch_mb",
                  key));
}

std::string describe(const SandboxLimits& limits) {
  return fmt::format("{} ms, {} MiB, {} processes, {} KiB of output, {} MiB of scratch",
                     limits.wallTime.count(), limits.memoryBytes / kMiB, limits.processes,
                     limits.outputBytes / 1024, limits.scratchBytes / kMiB);
}

}  // namespace kiln::sandbox
