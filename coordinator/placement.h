// Where a new session goes: a pure policy over a snapshot of the cluster,
// tested without sockets. Least loaded first (sessions per slot, counting
// placements the worker has not reported yet), only workers that host the
// session type and are below their session limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"

namespace kiln {

struct WorkerSnapshot {
  WorkerId id;
  std::vector<std::string> sessionTypes;
  std::uint32_t slots = 1;
  std::uint32_t maxSessions = 0;
  std::uint32_t liveSessions = 0;
  std::uint32_t placedSessions = 0;  // placed since its last report
  std::uint32_t busySlots = 0;
};

// The chosen worker; not-found if no worker hosts the type (a wrong request),
// overloaded if every worker that hosts it is full (retry later).
Result<WorkerId> placeSession(const std::vector<WorkerSnapshot>& workers,
                              const std::string& sessionType);

}  // namespace kiln
