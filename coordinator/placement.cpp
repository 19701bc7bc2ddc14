#include "coordinator/placement.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

namespace {

double loadOf(const WorkerSnapshot& worker) {
  return static_cast<double>(worker.liveSessions + worker.placedSessions) /
         std::max<std::uint32_t>(worker.slots, 1);
}

bool full(const WorkerSnapshot& worker) {
  return worker.maxSessions != 0 &&
         worker.liveSessions + worker.placedSessions >= worker.maxSessions;
}

// Why no worker could be chosen: `hostsOfType` host the type (all full);
// `known` are the types the cluster hosts.
Status noPlacement(const std::string& sessionType, std::size_t workers, std::size_t hostsOfType,
                   const std::set<std::string>& known) {
  if (hostsOfType > 0) {
    return overloaded(
        fmt::format("no capacity: every worker hosting '{}' is at its session limit; retry later",
                    sessionType));
  }
  if (workers == 0) {
    return overloaded(fmt::format(
        "no capacity: no worker is registered yet for '{}'; retry when workers join", sessionType));
  }
  return notFound(fmt::format("no worker hosts session type '{}' (hosted: {})", sessionType,
                              fmt::join(known, ", ")));
}

}  // namespace

PlacementIndex::Key PlacementIndex::keyOf(const WorkerSnapshot& worker) {
  return {loadOf(worker), worker.busySlots, worker.id.value};
}

Result<WorkerId> placeSession(const std::vector<WorkerSnapshot>& workers,
                              const std::string& sessionType) {
  // The index's order, by a scan: an experiment's few workers, per placement.
  const WorkerSnapshot* best = nullptr;
  std::size_t hostsOfType = 0;
  for (const WorkerSnapshot& worker : workers) {
    const auto& types = worker.sessionTypes;
    if (std::find(types.begin(), types.end(), sessionType) == types.end()) continue;
    ++hostsOfType;
    if (full(worker)) continue;
    if (best == nullptr || PlacementIndex::keyOf(worker) < PlacementIndex::keyOf(*best)) {
      best = &worker;
    }
  }
  if (best != nullptr) return best->id;
  std::set<std::string> known;
  for (const WorkerSnapshot& worker : workers) {
    known.insert(worker.sessionTypes.begin(), worker.sessionTypes.end());
  }
  return noPlacement(sessionType, workers.size(), hostsOfType, known);
}

void PlacementIndex::unlink(const Entry& entry) {
  for (const std::string& type : entry.worker.sessionTypes) {
    if (!entry.full) ready_[type].erase(entry.key);
    if (--hostsOfType_[type] == 0) {
      hostsOfType_.erase(type);
      ready_.erase(type);
    }
  }
}

void PlacementIndex::link(const Entry& entry) {
  for (const std::string& type : entry.worker.sessionTypes) {
    ++hostsOfType_[type];
    if (!entry.full) ready_[type].insert(entry.key);
  }
}

void PlacementIndex::upsert(const WorkerSnapshot& worker) {
  auto [it, added] = workers_.try_emplace(worker.id.value);
  Entry& entry = it->second;
  if (!added) unlink(entry);
  entry.worker = worker;
  // A worker that lists a type twice is counted once.
  std::sort(entry.worker.sessionTypes.begin(), entry.worker.sessionTypes.end());
  entry.worker.sessionTypes.erase(
      std::unique(entry.worker.sessionTypes.begin(), entry.worker.sessionTypes.end()),
      entry.worker.sessionTypes.end());
  entry.key = keyOf(entry.worker);
  entry.full = full(entry.worker);
  link(entry);
}

void PlacementIndex::remove(WorkerId id) {
  auto found = workers_.find(id.value);
  if (found == workers_.end()) return;
  unlink(found->second);
  workers_.erase(found);
}

const WorkerSnapshot* PlacementIndex::find(WorkerId id) const {
  auto found = workers_.find(id.value);
  return found == workers_.end() ? nullptr : &found->second.worker;
}

Result<WorkerId> PlacementIndex::place(const std::string& sessionType,
                                       const std::function<bool(WorkerId)>& avoided) const {
  auto ready = ready_.find(sessionType);
  if (ready != ready_.end() && !ready->second.empty()) {
    for (const Key& key : ready->second) {
      WorkerId id{std::get<2>(key)};
      if (!avoided || !avoided(id)) return id;
    }
    return overloaded(fmt::format(
        "no capacity: every worker hosting '{}' with room is one this client saw fail; retry "
        "later",
        sessionType));
  }
  auto hosts = hostsOfType_.find(sessionType);
  std::set<std::string> known;
  for (const auto& [type, count] : hostsOfType_) known.insert(type);
  return noPlacement(sessionType, workers_.size(), hosts == hostsOfType_.end() ? 0 : hosts->second,
                     known);
}

Result<PlacementIndex::Choice> PlacementIndex::placeNear(
    const std::string& sessionType, const std::vector<WorkerId>& preferred, double slack,
    const std::function<bool(WorkerId)>& avoided) const {
  KILN_ASSIGN_OR_RETURN(WorkerId least, place(sessionType, avoided));
  const Entry* best = nullptr;
  for (WorkerId id : preferred) {
    auto found = workers_.find(id.value);
    if (found == workers_.end() || found->second.full || (avoided && avoided(id))) continue;
    const auto& types = found->second.worker.sessionTypes;
    if (!std::binary_search(types.begin(), types.end(), sessionType)) continue;
    if (best == nullptr || found->second.key < best->key) best = &found->second;
  }
  // A warm worker with a free slot wins; a full one does not push a session
  // onto a busy slot while another worker has a free one; when every worker
  // is busy, the warm one wins within the slack.
  const Entry& leastEntry = workers_.at(least.value);
  auto hasRoom = [](const WorkerSnapshot& w) {
    return w.liveSessions + w.placedSessions < std::max<std::uint32_t>(w.slots, 1);
  };
  if (best != nullptr &&
      (hasRoom(best->worker) || (!hasRoom(leastEntry.worker) &&
                                 std::get<0>(best->key) <= std::get<0>(leastEntry.key) + slack))) {
    return Choice{best->worker.id, true};
  }
  return Choice{least, false};
}

BenchmarkAffinity::BenchmarkAffinity(std::size_t maxBenchmarks, std::size_t hostsPerBenchmark)
    : maxBenchmarks_(std::max<std::size_t>(maxBenchmarks, 1)),
      hostsPerBenchmark_(std::max<std::size_t>(hostsPerBenchmark, 1)) {}

std::vector<WorkerId> BenchmarkAffinity::hostsOf(const std::string& benchmark) const {
  auto found = byDigest_.find(std::hash<std::string>{}(benchmark));
  return found == byDigest_.end() ? std::vector<WorkerId>{} : found->second->hosts;
}

void BenchmarkAffinity::remember(const std::string& benchmark, WorkerId worker) {
  const std::uint64_t digest = std::hash<std::string>{}(benchmark);
  auto found = byDigest_.find(digest);
  if (found == byDigest_.end()) {
    recent_.push_front(Entry{digest, {}});
    found = byDigest_.emplace(digest, recent_.begin()).first;
    if (byDigest_.size() > maxBenchmarks_) {
      byDigest_.erase(recent_.back().digest);
      recent_.pop_back();
    }
  } else {
    recent_.splice(recent_.begin(), recent_, found->second);
  }
  auto& hosts = found->second->hosts;
  std::erase(hosts, worker);
  hosts.insert(hosts.begin(), worker);
  if (hosts.size() > hostsPerBenchmark_) hosts.resize(hostsPerBenchmark_);
}

}  // namespace kiln
