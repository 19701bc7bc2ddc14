// Where a new session goes: a pure policy over the cluster's workers, tested
// without sockets. Least loaded first (sessions per slot, counting
// placements the worker has not reported yet; ties to the worker with idle
// slots, then the oldest id), only workers that host the session type and
// are below their session limit.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <kiln/ids.h>
#include <kiln/status.h>

namespace kiln {

// The workers a client saw die, for its next placement: by id (one process's
// registration) where the client knew it, so that a worker started again at
// the same endpoint is not avoided with its dead predecessor; by endpoint
// where it did not. Sets: a placement may ask about every candidate.
struct AvoidList {
  // More is no client's honest list: a request beyond it is refused.
  static constexpr std::size_t kMaxEntries = 4096;

  std::unordered_set<std::uint64_t> workers;
  std::unordered_set<std::string> endpoints;

  bool empty() const { return workers.empty() && endpoints.empty(); }
  bool covers(WorkerId id, const std::string& endpoint) const {
    return workers.contains(id.value) || endpoints.contains(endpoint);
  }
};

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
// overloaded if every worker that hosts it is full (retry later). A scan:
// for a handful of workers (an experiment's).
Result<WorkerId> placeSession(const std::vector<WorkerSnapshot>& workers,
                              const std::string& sessionType);

// The same policy over a whole cluster, kept ordered as the workers' figures
// change, so that a placement costs O(log n) and not a scan of every worker:
// a coordinator with thousands of hosts places thousands of sessions a second.
class PlacementIndex {
 public:
  // Adds the worker, or takes its new figures.
  void upsert(const WorkerSnapshot& worker);
  void remove(WorkerId id);
  const WorkerSnapshot* find(WorkerId id) const;
  std::size_t size() const { return workers_.size(); }

  // As placeSession() over every worker, skipping those `avoided` says to
  // (a client's recently failed endpoints: few).
  Result<WorkerId> place(const std::string& sessionType,
                         const std::function<bool(WorkerId)>& avoided = {}) const;

  struct Choice {
    WorkerId worker;
    bool preferred = false;  // one of `preferred`
  };
  // As place(), but the least loaded of `preferred` (workers that likely
  // hold the session's benchmark in their caches) wins while it has a free
  // slot, or, when the least loaded worker has none either, while its load
  // is within `slack` sessions per slot of that worker's: a start from a warm
  // cache is far cheaper than a fresh parse, but a session on a busy slot
  // is slower for its whole life, and a warm cache is not worth that while
  // another worker has a free slot.
  Result<Choice> placeNear(const std::string& sessionType, const std::vector<WorkerId>& preferred,
                           double slack, const std::function<bool(WorkerId)>& avoided = {}) const;

  // Ascending = preferred: load, busy slots, id (placeSession's order too).
  using Key = std::tuple<double, std::uint32_t, std::uint64_t>;
  static Key keyOf(const WorkerSnapshot& worker);

 private:
  struct Entry {
    WorkerSnapshot worker;
    Key key;
    bool full = false;  // at its session limit: in no ready set
  };
  void unlink(const Entry& entry);
  void link(const Entry& entry);

  std::unordered_map<std::uint64_t, Entry> workers_;
  std::map<std::string, std::set<Key>> ready_;        // by session type: not full
  std::map<std::string, std::uint32_t> hostsOfType_;  // by session type: full or not
};

// Where the coordinator last placed sessions of each benchmark: the workers
// most likely to hold it in their benchmark and parsed-module caches. A
// guess, never a promise (a worker evicts as it must), so it is bounded and
// simple: the last `hostsPerBenchmark` workers of each of the
// `maxBenchmarks` most recently placed benchmarks.
class BenchmarkAffinity {
 public:
  explicit BenchmarkAffinity(std::size_t maxBenchmarks = 100000, std::size_t hostsPerBenchmark = 4);
  // Most recent first; empty for a benchmark not placed lately.
  std::vector<WorkerId> hostsOf(const std::string& benchmark) const;
  void remember(const std::string& benchmark, WorkerId worker);
  std::size_t size() const { return byDigest_.size(); }

 private:
  struct Entry {
    std::uint64_t digest;
    std::vector<WorkerId> hosts;  // most recent first
  };
  std::size_t maxBenchmarks_;
  std::size_t hostsPerBenchmark_;
  std::list<Entry> recent_;  // most recently placed first
  std::unordered_map<std::uint64_t, std::list<Entry>::iterator> byDigest_;
};

}  // namespace kiln
