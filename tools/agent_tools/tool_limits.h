// What one caller of kiln's agent tools may ask for (tools/agent_tools/):
// the bounds a trainer's rollouts run under, apart from the cluster's own
// quotas (docs/security.md), which still apply to every session a call opens.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::agent_tools {

struct ToolLimits {
  // A module sent with apply_passes (IR text, or bitcode after base64
  // decoding), before it goes to a worker (whose --max-benchmark-bytes
  // still applies).
  std::uint64_t maxModuleBytes = std::uint64_t{8} << 20;
  std::size_t maxPassesPerCall = 512;      // passes in one apply_passes
  std::size_t maxEpisodesPerCaller = 64;   // open episode handles of one caller
  std::uint64_t maxIrTextBytes = 1 << 20;  // the most ir_text returns (its max_bytes' ceiling)
  // Calls of one caller running at once; one more is refused (quota_exceeded),
  // not queued, so that one caller's burst never delays another's calls.
  std::size_t maxConcurrentCallsPerCaller = 16;
  std::size_t maxCallers = 1024;  // callers with state (episodes, cached prefixes) at once
  // The prefix cache of stateless calls (tool_executor.h), per lane: open
  // sessions, in all and their modules' instruction counts summed (a proxy
  // for bytes). With the episodes, below a worker's default
  // --max-sessions-per-client (256); a worker that refuses more sheds the
  // cache's older half.
  std::size_t prefixCacheEntries = 128;
  std::uint64_t prefixCacheInstructions = std::uint64_t{4} << 20;
};

}  // namespace kiln::agent_tools
