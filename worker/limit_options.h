// The operator's limits on what clients may hold and send on one serving
// process, as flags with one wording on every command that serves sessions:
// `kiln worker`, `kiln nest`, `kiln local` and runWorker<...>() binaries.
// A client may lower some of them for itself (deadlines, cache bounds with
// --allow-client-tuning), never raise one.
#pragma once

#include <CLI/CLI.hpp>

#include "worker/worker_server.h"

namespace kiln {

// --max-sessions-per-client, --max-sessions, --max-compilers-per-client,
// --max-compilers, --cache-bytes, --max-benchmark-bytes,
// --max-benchmark-bytes-per-client, --max-module-data-bytes, --max-message-bytes,
// --lease-seconds, --deadline-seconds and --max-deadline-seconds into `config`.
void addHostLimitOptions(CLI::App& app, WorkerConfig& config);

// A count flag in [low, high] that shows its default (every limit above;
// the coordinator's experiment limits).
void addCountOption(CLI::App& app, const std::string& flag, std::uint32_t& target,
                    std::uint32_t low, std::uint32_t high, const std::string& help);

}  // namespace kiln
