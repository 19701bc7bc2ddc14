#include "coordinator/experiment_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {
namespace {

bool serves(const NestingHostView& host, const ExperimentSpec& spec) {
  return std::all_of(spec.sessionTypes.begin(), spec.sessionTypes.end(), [&](const auto& type) {
    return std::find(host.sessionTypes.begin(), host.sessionTypes.end(), type) !=
           host.sessionTypes.end();
  });
}

struct Candidate {
  const NestingHostView* host;
  std::uint32_t mine = 0;  // this experiment's workers on it
  std::uint32_t all = 0;
};

std::vector<Candidate> candidates(const std::vector<NestingHostView>& hosts,
                                  const ExperimentSpec& spec,
                                  const std::vector<AssignedWorker>& current) {
  std::vector<Candidate> result;
  for (const NestingHostView& host : hosts) {
    if (!serves(host, spec)) continue;
    Candidate candidate{&host, 0, host.underlyingWorkers};
    for (const AssignedWorker& worker : current) {
      if (worker.host == host.id) ++candidate.mine;
    }
    result.push_back(candidate);
  }
  return result;
}

bool spreadBefore(const Candidate& a, const Candidate& b) {
  if (a.mine != b.mine) return a.mine < b.mine;
  if (a.all != b.all) return a.all < b.all;
  return a.host->id.value < b.host->id.value;
}

bool packBefore(const Candidate& a, const Candidate& b) {
  bool aFull = a.mine >= a.host->slots;
  bool bFull = b.mine >= b.host->slots;
  if (aFull != bFull) return !aFull;
  if (a.mine != b.mine) return a.mine > b.mine;
  if (a.all != b.all) return a.all < b.all;
  return a.host->id.value < b.host->id.value;
}

}  // namespace

Result<std::vector<WorkerId>> planNewWorkers(const std::vector<NestingHostView>& hosts,
                                             const ExperimentSpec& spec,
                                             const std::vector<AssignedWorker>& current,
                                             std::uint32_t count) {
  if (count == 0) return std::vector<WorkerId>{};
  if (hosts.empty()) {
    return overloaded(
        fmt::format("experiment '{}': no nesting host is registered yet; its "
                    "workers are placed when hosts join",
                    spec.name));
  }
  std::vector<Candidate> pool = candidates(hosts, spec, current);
  if (pool.empty()) {
    return notFound(fmt::format("experiment '{}': no nesting host serves session types [{}]",
                                spec.name, fmt::join(spec.sessionTypes, ", ")));
  }
  std::vector<WorkerId> chosen;
  for (std::uint32_t i = 0; i < count; ++i) {
    auto best = std::min_element(pool.begin(), pool.end(), spec.pack ? packBefore : spreadBefore);
    chosen.push_back(best->host->id);
    ++best->mine;
    ++best->all;
  }
  return chosen;
}

std::optional<std::uint64_t> pickRebalanceMove(const std::vector<NestingHostView>& hosts,
                                               const ExperimentSpec& spec,
                                               const std::vector<AssignedWorker>& current) {
  if (spec.pack) return std::nullopt;
  std::vector<Candidate> pool = candidates(hosts, spec, current);
  if (pool.size() < 2) return std::nullopt;
  auto [light, heavy] =
      std::minmax_element(pool.begin(), pool.end(), [](const Candidate& a, const Candidate& b) {
        return a.mine != b.mine ? a.mine < b.mine : a.host->id.value < b.host->id.value;
      });
  if (heavy->mine < light->mine + 2) return std::nullopt;
  // Only idle workers move: moving one ends its sessions.
  for (const AssignedWorker& worker : current) {
    if (worker.host == heavy->host->id && worker.liveSessions == 0) return worker.workerId;
  }
  return std::nullopt;
}

}  // namespace kiln
