// Where experiments' underlying workers go, without sockets.
#include <gtest/gtest.h>

#include <map>

#include "coordinator/experiment_plan.h"

namespace kiln {
namespace {

std::vector<NestingHostView> hosts(unsigned count, std::uint32_t slots = 4) {
  std::vector<NestingHostView> views;
  for (unsigned i = 1; i <= count; ++i) views.push_back({WorkerId{i}, slots, {"noop", "llvm"}, 0});
  return views;
}

std::map<std::uint64_t, int> countByHost(const std::vector<WorkerId>& chosen) {
  std::map<std::uint64_t, int> counts;
  for (WorkerId id : chosen) ++counts[id.value];
  return counts;
}

ExperimentSpec spec(std::uint32_t workers, bool pack = false) {
  ExperimentSpec s;
  s.name = "exp";
  s.workers = workers;
  s.pack = pack;
  return s;
}

TEST(ExperimentPlan, SpreadsOverHosts) {
  auto plan = planNewWorkers(hosts(3), spec(6), {}, 6);
  ASSERT_TRUE(plan.ok()) << plan.status().toString();
  EXPECT_EQ(countByHost(*plan), (std::map<std::uint64_t, int>{{1, 2}, {2, 2}, {3, 2}}));
}

TEST(ExperimentPlan, SpreadPrefersHostsWithFewerWorkersOfAnyExperiment) {
  auto views = hosts(2);
  views[0].underlyingWorkers = 5;  // busy with another experiment
  auto plan = planNewWorkers(views, spec(1), {}, 1);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ((*plan)[0].value, 2u);
}

TEST(ExperimentPlan, PackFillsOneHostFirst) {
  auto plan = planNewWorkers(hosts(3, 2), spec(5, true), {}, 5);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(countByHost(*plan), (std::map<std::uint64_t, int>{{1, 2}, {2, 2}, {3, 1}}));
}

TEST(ExperimentPlan, PackOvercommitsWhenEveryHostIsFull) {
  auto plan = planNewWorkers(hosts(1, 2), spec(3, true), {}, 3);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->size(), 3u);
}

TEST(ExperimentPlan, KeepsExistingWorkersInMind) {
  std::vector<AssignedWorker> current = {{10, WorkerId{1}, 0}, {11, WorkerId{1}, 0}};
  auto plan = planNewWorkers(hosts(2), spec(4), current, 2);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(countByHost(*plan), (std::map<std::uint64_t, int>{{2, 2}}));
}

TEST(ExperimentPlan, OnlyHostsServingTheTypes) {
  auto views = hosts(2);
  views[1].sessionTypes = {"noop"};
  ExperimentSpec s = spec(2);
  s.sessionTypes = {"llvm"};
  auto plan = planNewWorkers(views, s, {}, 2);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(countByHost(*plan), (std::map<std::uint64_t, int>{{1, 2}}));
  s.sessionTypes = {"mlgo-inline"};
  EXPECT_EQ(planNewWorkers(views, s, {}, 1).status().code(), ErrorCode::kNotFound);
}

TEST(ExperimentPlan, NoHostsYetIsRetryable) {
  EXPECT_EQ(planNewWorkers({}, spec(1), {}, 1).status().code(), ErrorCode::kOverloaded);
}

TEST(ExperimentPlan, RebalanceMovesOneIdleWorkerToANewHost) {
  // Four workers on host 1; host 2 just joined.
  std::vector<AssignedWorker> current = {
      {10, WorkerId{1}, 3}, {11, WorkerId{1}, 0}, {12, WorkerId{1}, 1}, {13, WorkerId{1}, 0}};
  auto move = pickRebalanceMove(hosts(2), spec(4), current);
  ASSERT_TRUE(move.has_value());
  EXPECT_TRUE(*move == 11 || *move == 13);  // idle ones only
}

TEST(ExperimentPlan, NoRebalanceWhenEvenBusyOrPacked) {
  std::vector<AssignedWorker> even = {{10, WorkerId{1}, 0}, {11, WorkerId{2}, 0}};
  EXPECT_FALSE(pickRebalanceMove(hosts(2), spec(2), even).has_value());
  std::vector<AssignedWorker> busy = {{10, WorkerId{1}, 1}, {11, WorkerId{1}, 2}};
  EXPECT_FALSE(pickRebalanceMove(hosts(2), spec(2), busy).has_value());
  std::vector<AssignedWorker> idle = {{10, WorkerId{1}, 0}, {11, WorkerId{1}, 0}};
  EXPECT_FALSE(pickRebalanceMove(hosts(2), spec(2, true), idle).has_value());
}

}  // namespace
}  // namespace kiln
