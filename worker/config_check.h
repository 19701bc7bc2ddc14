// The ranges of a worker's numeric settings, in one place for its flags
// (worker_cli.cpp, which refuses a flag out of range before anything
// starts) and for WorkerServer::create(), which refuses a config built in
// process (kiln local, tests) the same way. A bound here is what the
// process can honour: e.g. a message limit of 0 or 2^63 bytes is refused,
// not wrapped around.
#pragma once

#include <cstdint>

#include <kiln/status.h>

namespace kiln {

struct WorkerConfig;

inline constexpr unsigned kMaxSlots = 1024;
inline constexpr std::uint64_t kMinMessageBytes = 4096;
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 30;  // 1 GiB
inline constexpr std::uint64_t kMaxBenchmarkBytes = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kMaxModuleDataBytes = std::uint64_t{16} << 30;  // 16 GiB
inline constexpr std::uint64_t kMinCacheBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxCacheBytes = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kMaxCompileMemoryMb = std::uint64_t{1} << 24;  // 16 TiB
inline constexpr double kMaxDeadlineSeconds = 86400.0;

// Ok, or invalid-argument naming the flag of the first setting out of range.
Status checkWorkerConfig(const WorkerConfig& config);

}  // namespace kiln
