#include "worker/config_check.h"

#include <fmt/format.h>

#include "worker/worker_server.h"

namespace kiln {

namespace {

Status inRange(std::string_view flag, std::uint64_t value, std::uint64_t low, std::uint64_t high) {
  if (value >= low && value <= high) return okStatus();
  return invalidArgument(fmt::format("{} is {}, outside [{}, {}]", flag, value, low, high));
}

double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

Status positiveSeconds(std::string_view flag, Duration value, double high) {
  if (value > Duration::zero() && seconds(value) <= high) return okStatus();
  return invalidArgument(fmt::format("{} is {} s, outside (0, {}]", flag, seconds(value), high));
}

}  // namespace

Status checkWorkerConfig(const WorkerConfig& c) {
  KILN_RETURN_IF_ERROR(inRange("--slots", c.slots, 1, kMaxSlots));
  KILN_RETURN_IF_ERROR(
      inRange("--max-message-bytes", c.frames.maxMessageBytes, kMinMessageBytes, kMaxMessageBytes));
  KILN_RETURN_IF_ERROR(
      inRange("--max-benchmark-bytes", c.limits.maxBenchmarkBytes, 1, kMaxBenchmarkBytes));
  KILN_RETURN_IF_ERROR(
      inRange("--max-module-data-bytes", c.limits.maxModuleDataBytes, 1, kMaxModuleDataBytes));
  KILN_RETURN_IF_ERROR(inRange("--cache-bytes", c.cacheBytes, kMinCacheBytes, kMaxCacheBytes));
  KILN_RETURN_IF_ERROR(inRange("--max-sessions", c.limits.maxSessions, 1, 10'000'000));
  KILN_RETURN_IF_ERROR(
      inRange("--max-sessions-per-client", c.limits.maxSessionsPerClient, 1, 10'000'000));
  KILN_RETURN_IF_ERROR(
      inRange("--compile-memory-mb", c.limits.compileMemoryBytes >> 20, 0, kMaxCompileMemoryMb));
  KILN_RETURN_IF_ERROR(
      positiveSeconds("--deadline-seconds", c.limits.defaultDeadline, kMaxDeadlineSeconds));
  if (c.limits.maxDeadline != Duration::zero()) {
    KILN_RETURN_IF_ERROR(
        positiveSeconds("--max-deadline-seconds", c.limits.maxDeadline, kMaxDeadlineSeconds));
    if (c.limits.maxDeadline < c.limits.defaultDeadline) {
      return invalidArgument(fmt::format(
          "--max-deadline-seconds ({} s) is shorter than --deadline-seconds ({} s), the deadline "
          "of a request that sets none: lower --deadline-seconds too",
          seconds(c.limits.maxDeadline), seconds(c.limits.defaultDeadline)));
    }
  }
  KILN_RETURN_IF_ERROR(
      positiveSeconds("--lease-seconds", c.limits.leaseTimeout, kMaxDeadlineSeconds));
  KILN_RETURN_IF_ERROR(
      positiveSeconds("--heartbeat-seconds", c.link.heartbeatInterval, kMaxDeadlineSeconds));
  return checkOperatorSettings(c.settings);
}

}  // namespace kiln
