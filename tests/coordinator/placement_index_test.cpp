// The placement index against the policy it keeps ordered, written out as a
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

}  // namespace
}  // namespace kiln
