#include "coordinator/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace kiln {

Result<WorkerId> placeSession(const std::vector<WorkerSnapshot>& workers,
                              const std::string& sessionType) {
  const WorkerSnapshot* best = nullptr;
  double bestLoad = 0;
  bool anyHosts = false;
  for (const WorkerSnapshot& worker : workers) {
    const auto& types = worker.sessionTypes;
    if (std::find(types.begin(), types.end(), sessionType) == types.end()) continue;
    anyHosts = true;
    std::uint32_t sessions = worker.liveSessions + worker.placedSessions;
    if (worker.maxSessions != 0 && sessions >= worker.maxSessions) continue;
    double load = static_cast<double>(sessions) / std::max<std::uint32_t>(worker.slots, 1);
    // Ties go to the worker with idle slots, then to the oldest id (stable).
    bool better = best == nullptr || load < bestLoad ||
                  (load == bestLoad &&
                   (worker.busySlots < best->busySlots ||
                    (worker.busySlots == best->busySlots && worker.id.value < best->id.value)));
    if (better) {
      best = &worker;
      bestLoad = load;
    }
  }
  if (best != nullptr) return best->id;
  if (anyHosts) {
    return overloaded(
        fmt::format("no capacity: every worker hosting '{}' is at its session limit; retry later",
                    sessionType));
  }
  std::set<std::string> known;
  for (const WorkerSnapshot& worker : workers)
    known.insert(worker.sessionTypes.begin(), worker.sessionTypes.end());
  if (workers.empty()) {
    return overloaded(fmt::format(
        "no capacity: no worker is registered yet for '{}'; retry when workers join", sessionType));
  }
  return notFound(fmt::format("no worker hosts session type '{}' (hosted: {})", sessionType,
                              fmt::join(known, ", ")));
}

}  // namespace kiln
