// Placement as a pure policy: the scan for a few workers, and the index
// against the policy it keeps ordered, written out as a
// scan: after any sequence of registrations, reports, placements and losses
// it must choose what a scan of every worker would.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "coordinator/placement.h"

namespace kiln {
namespace {

WorkerSnapshot worker(std::uint64_t id, std::uint32_t slots, std::uint32_t live,
                      std::vector<std::string> types = {"llvm"}, std::uint32_t max = 0) {
  WorkerSnapshot w;
  w.id = WorkerId{id};
  w.slots = slots;
  w.liveSessions = live;
  w.maxSessions = max;
  w.sessionTypes = std::move(types);
  return w;
}

TEST(PlacementTest, LeastLoadedPerSlotWins) {
  std::vector<WorkerSnapshot> cluster{worker(1, 2, 4, {"noop"}), worker(2, 8, 8, {"noop"}),
                                      worker(3, 1, 3, {"noop"})};
  EXPECT_EQ(placeSession(cluster, "noop")->value, 2u);  // 1 session per slot
}

TEST(PlacementTest, PendingPlacementsCountAsLoad) {
  std::vector<WorkerSnapshot> cluster{worker(1, 1, 0, {"noop"}), worker(2, 1, 1, {"noop"})};
  cluster[0].placedSessions = 2;
  EXPECT_EQ(placeSession(cluster, "noop")->value, 2u);
}

TEST(PlacementTest, RespectsSessionTypesAndLimits) {
  std::vector<WorkerSnapshot> cluster{worker(1, 4, 0, {"llvm"}), worker(2, 1, 5, {"noop"}, 5)};
  EXPECT_EQ(placeSession(cluster, "llvm")->value, 1u);
  auto full = placeSession(cluster, "noop");
  EXPECT_EQ(full.status().code(), ErrorCode::kOverloaded);
  auto unknown = placeSession(cluster, "gcc");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("llvm, noop"), std::string::npos);
  EXPECT_EQ(placeSession({}, "noop").status().code(), ErrorCode::kOverloaded);
}

// The policy as the coordinator states it, one worker at a time.
std::optional<std::uint64_t> scan(const std::map<std::uint64_t, WorkerSnapshot>& workers,
                                  const std::string& type, const std::set<std::uint64_t>& avoid) {
  const WorkerSnapshot* best = nullptr;
  auto load = [](const WorkerSnapshot& w) {
    return static_cast<double>(w.liveSessions + w.placedSessions) / std::max(w.slots, 1u);
  };
  for (const auto& [id, w] : workers) {
    if (std::find(w.sessionTypes.begin(), w.sessionTypes.end(), type) == w.sessionTypes.end() ||
        avoid.contains(id)) {
      continue;
    }
    if (w.maxSessions != 0 && w.liveSessions + w.placedSessions >= w.maxSessions) continue;
    if (best == nullptr || load(w) < load(*best) ||
        (load(w) == load(*best) && (w.busySlots < best->busySlots ||
                                    (w.busySlots == best->busySlots && id < best->id.value)))) {
      best = &w;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->id.value;
}

TEST(PlacementIndexTest, ChoosesWhatAScanOfEveryWorkerWouldThroughRandomChanges) {
  std::mt19937 random(7);
  const std::vector<std::vector<std::string>> typeSets = {
      {"llvm"}, {"noop"}, {"llvm", "noop"}, {"mlgo-inline", "llvm"}};
  std::map<std::uint64_t, WorkerSnapshot> truth;
  PlacementIndex index;
  int placedChecks = 0;
  for (int step = 0; step < 5000; ++step) {
    const std::uint64_t id = 1 + random() % 40;
    switch (random() % 6) {
      case 0:
      case 1: {  // registers, or reports new figures
        WorkerSnapshot w;
        w.id = WorkerId{id};
        w.sessionTypes = typeSets[random() % typeSets.size()];
        w.slots = 1 + random() % 8;
        w.maxSessions = random() % 3 == 0 ? 0 : 1 + random() % 12;
        w.liveSessions = random() % 12;
        w.placedSessions = random() % 3;
        w.busySlots = random() % (w.slots + 1);
        truth[id] = w;
        index.upsert(w);
        break;
      }
      case 2:  // lost
        truth.erase(id);
        index.remove(WorkerId{id});
        break;
      default: {  // a placement, avoiding a few endpoints now and then
        const std::string type = random() % 5 == 0 ? "gcc" : (random() % 2 ? "llvm" : "noop");
        std::set<std::uint64_t> avoid;
        if (random() % 4 == 0) avoid = {1 + random() % 40, 1 + random() % 40};
        auto chosen = index.place(type, [&](WorkerId w) { return avoid.contains(w.value); });
        auto expected = scan(truth, type, avoid);
        ASSERT_EQ(chosen.ok(), expected.has_value()) << "step " << step << " type " << type;
        if (!expected) break;
        ASSERT_EQ(chosen->value, *expected) << "step " << step;
        ++placedChecks;
        // The coordinator counts the placement against the worker at once.
        ++truth[*expected].placedSessions;
        index.upsert(truth[*expected]);
      }
    }
    ASSERT_EQ(index.size(), truth.size());
  }
  EXPECT_GT(placedChecks, 1000);
}

TEST(PlacementIndexTest, SaysWhyNothingWasChosen) {
  PlacementIndex index;
  EXPECT_EQ(index.place("llvm").status().code(), ErrorCode::kOverloaded);  // no worker yet
  WorkerSnapshot w;
  w.id = WorkerId{1};
  w.sessionTypes = {"llvm"};
  w.maxSessions = 1;
  index.upsert(w);
  auto unknown = index.place("gcc");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("hosted: llvm"), std::string::npos);
  auto avoided = index.place("llvm", [](WorkerId) { return true; });
  EXPECT_EQ(avoided.status().code(), ErrorCode::kOverloaded);
  EXPECT_NE(avoided.status().message().find("saw fail"), std::string::npos);
  w.liveSessions = 1;  // at its limit
  index.upsert(w);
  EXPECT_NE(index.place("llvm").status().message().find("session limit"), std::string::npos);
  index.remove(WorkerId{1});
  EXPECT_EQ(index.place("llvm").status().code(), ErrorCode::kOverloaded);
  EXPECT_EQ(index.size(), 0u);
}

TEST(PlacementIndexTest, AWorkerListingATypeTwiceIsOneHostOfIt) {
  PlacementIndex index;
  WorkerSnapshot w;
  w.id = WorkerId{3};
  w.sessionTypes = {"llvm", "llvm"};
  index.upsert(w);
  index.remove(WorkerId{3});
  EXPECT_EQ(index.place("llvm").status().code(), ErrorCode::kOverloaded);
  EXPECT_EQ(index.place("llvm").status().message().find("hosted"), std::string::npos);
}

TEST(PlacementIndexTest, AWarmWorkerWinsWithAFreeSlotOrWithinTheSlackWhenAllAreBusy) {
  PlacementIndex index;
  index.upsert(worker(1, 2, 0));  // least loaded, idle
  index.upsert(worker(2, 4, 2));  // warm, 0.5 per slot, a free slot
  index.upsert(worker(3, 1, 1));  // warm, busy
  auto near = index.placeNear("llvm", {WorkerId{2}}, 1.0);
  ASSERT_TRUE(near.ok());
  EXPECT_EQ(near->worker.value, 2u);
  EXPECT_TRUE(near->preferred);
  // A busy warm worker does not take a session while another has a free slot.
  near = index.placeNear("llvm", {WorkerId{3}}, 1.0);
  EXPECT_EQ(near->worker.value, 1u);
  EXPECT_FALSE(near->preferred);
  // Every worker busy: the warm one within the slack, the load beyond it.
  index.upsert(worker(1, 2, 2));  // 1.0 per slot: the least loaded
  index.upsert(worker(2, 2, 4));  // 2.0
  index.upsert(worker(3, 2, 8));  // 4.0
  EXPECT_EQ(index.placeNear("llvm", {WorkerId{2}}, 1.0)->worker.value, 2u);
  EXPECT_EQ(index.placeNear("llvm", {WorkerId{3}}, 1.0)->worker.value, 1u);
  // The least loaded of several warm workers; one that is gone, avoided, full
  // or of another type is passed over.
  index.upsert(worker(4, 2, 1, {"noop"}));
  index.upsert(worker(5, 1, 1, {"llvm"}, 1));  // at its session limit
  near = index.placeNear("llvm", {WorkerId{9}, WorkerId{4}, WorkerId{5}, WorkerId{3}, WorkerId{2}},
                         5.0, [](WorkerId w) { return w.value == 2; });
  EXPECT_EQ(near->worker.value, 3u);
  EXPECT_TRUE(near->preferred);
  // No slack, or no warm worker: the load alone.
  EXPECT_EQ(index.placeNear("llvm", {WorkerId{2}}, 0.0)->worker.value, 1u);
  EXPECT_EQ(index.placeNear("llvm", {}, 1.0)->worker.value, 1u);
  EXPECT_EQ(index.placeNear("gcc", {WorkerId{1}}, 1.0).status().code(), ErrorCode::kNotFound);
}

TEST(BenchmarkAffinityTest, RemembersTheLastHostsOfTheMostRecentBenchmarks) {
  BenchmarkAffinity affinity(/*maxBenchmarks=*/2, /*hostsPerBenchmark=*/2);
  EXPECT_TRUE(affinity.hostsOf("benchmark://a").empty());
  affinity.remember("benchmark://a", WorkerId{1});
  affinity.remember("benchmark://a", WorkerId{2});
  affinity.remember("benchmark://a", WorkerId{1});  // again: most recent first, once
  EXPECT_EQ(affinity.hostsOf("benchmark://a"), (std::vector<WorkerId>{WorkerId{1}, WorkerId{2}}));
  affinity.remember("benchmark://a", WorkerId{3});  // at most 2 hosts
  EXPECT_EQ(affinity.hostsOf("benchmark://a"), (std::vector<WorkerId>{WorkerId{3}, WorkerId{1}}));
  affinity.remember("benchmark://b", WorkerId{4});
  affinity.remember("benchmark://a", WorkerId{3});  // a is the most recent again
  affinity.remember("benchmark://c", WorkerId{5});  // at most 2 benchmarks: b goes
  EXPECT_TRUE(affinity.hostsOf("benchmark://b").empty());
  EXPECT_EQ(affinity.hostsOf("benchmark://c"), (std::vector<WorkerId>{WorkerId{5}}));
  EXPECT_FALSE(affinity.hostsOf("benchmark://a").empty());
  EXPECT_EQ(affinity.size(), 2u);
}

}  // namespace
}  // namespace kiln
