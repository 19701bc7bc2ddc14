// Which CPUs time programs and who times on which (programs/runs/cpu_ledger.h):
// the plan over a process's cores, where compile work goes meanwhile, and
// the line of measurements, driven by hand.
#include "programs/runs/cpu_ledger.h"

#include <gtest/gtest.h>

namespace kiln::runs {
namespace {

TEST(CpuPlanTest, HalfTheCoresMeasureTheLastOnes) {
  const MeasuringPlan plan = planMeasuringCpus({{0}, {1}, {2}, {3}}, 0);
  EXPECT_EQ(plan.allowed, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(plan.units.size(), 2u);
  EXPECT_EQ(plan.units[0], (MeasuringUnit{3, {3}}));
  EXPECT_EQ(plan.units[1], (MeasuringUnit{2, {2}}));
}

TEST(CpuPlanTest, OneCoreStillMeasuresAndTheOperatorMayAskForAll) {
  EXPECT_EQ(planMeasuringCpus({{5}}, 0).units, (std::vector<MeasuringUnit>{{5, {5}}}));
  EXPECT_EQ(planMeasuringCpus({{0}, {1}}, 0).units.size(), 1u);
  EXPECT_EQ(planMeasuringCpus({{0}, {1}}, 2).units.size(), 2u);
  EXPECT_EQ(planMeasuringCpus({{0}, {1}}, 64).units.size(), 2u);  // no more than there are
  EXPECT_TRUE(planMeasuringCpus({}, 0).units.empty());
}

TEST(CpuPlanTest, HyperthreadSiblingsAreOneUnit) {
  // Two cores of two threads each (0 and 2 share a core, as 1 and 3 do).
  const MeasuringPlan plan = planMeasuringCpus({{0, 2}, {3, 1}}, 0);
  ASSERT_EQ(plan.units.size(), 1u);
  EXPECT_EQ(plan.units[0], (MeasuringUnit{1, {1, 3}}));
  // While it measures, compile work keeps off the whole core.
  EXPECT_EQ(compileCpus(plan, {0}), (std::vector<int>{0, 2}));
  EXPECT_EQ(compileCpus(plan, {}), (std::vector<int>{0, 1, 2, 3}));
}

TEST(CpuPlanTest, CompileWorkKeepsEveryCpuWhenNoneWouldBeLeft) {
  const MeasuringPlan plan = planMeasuringCpus({{0}, {1}}, 2);
  EXPECT_EQ(compileCpus(plan, {0}), (std::vector<int>{0}));
  EXPECT_EQ(compileCpus(plan, {0, 1}), (std::vector<int>{0, 1}));
}

TEST(CpuListTest, ParsedAndDescribedAsProcListsThem) {
  EXPECT_EQ(parseCpuList("0-3,6\n"), (std::vector<int>{0, 1, 2, 3, 6}));
  EXPECT_EQ(parseCpuList("4"), (std::vector<int>{4}));
  EXPECT_EQ(parseCpuList(""), std::nullopt);
  EXPECT_EQ(parseCpuList("3-1"), std::nullopt);
  EXPECT_EQ(parseCpuList("a"), std::nullopt);
  EXPECT_EQ(parseCpuList("1,"), std::nullopt);
  EXPECT_EQ(describeCpus({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(describeCpus({}), "");
}

TEST(CpuLedgerTest, OneUnitMeasurementsTakeTurnsInOrder) {
  CpuLedger ledger(1);
  const auto first = ledger.enqueue();
  const auto second = ledger.enqueue();
  const auto third = ledger.enqueue();
  // Only the head may try, and the unit is free.
  EXPECT_EQ(ledger.candidates(first), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(ledger.candidates(second).empty());
  EXPECT_FALSE(ledger.take(second, 0));
  ASSERT_TRUE(ledger.take(first, 0));
  // The second is now at the head, but the unit is held: it waits.
  EXPECT_TRUE(ledger.candidates(second).empty());
  EXPECT_FALSE(ledger.take(second, 0));
  EXPECT_EQ(ledger.waiting(), 2u);
  EXPECT_FALSE(ledger.release(second, 0));  // not its unit
  ASSERT_TRUE(ledger.release(first, 0));
  EXPECT_TRUE(ledger.candidates(third).empty());
  ASSERT_TRUE(ledger.take(second, 0));
  ASSERT_TRUE(ledger.release(second, 0));
  ASSERT_TRUE(ledger.take(third, 0));
  EXPECT_EQ(ledger.held(), (std::vector<std::size_t>{0}));
  EXPECT_EQ(ledger.waiting(), 0u);
}

TEST(CpuLedgerTest, TwoUnitsTwoMeasurementsAtOnceNeverOnOneUnit) {
  CpuLedger ledger(2);
  const auto first = ledger.enqueue();
  const auto second = ledger.enqueue();
  ASSERT_TRUE(ledger.take(first, 0));
  // The next head is offered only the unit left.
  EXPECT_EQ(ledger.candidates(second), (std::vector<std::size_t>{1}));
  EXPECT_FALSE(ledger.take(second, 0));
  ASSERT_TRUE(ledger.take(second, 1));
  EXPECT_EQ(ledger.held(), (std::vector<std::size_t>{0, 1}));
  // A lone measurement later gets the first unit again: runs alone are
  // compared on one CPU.
  ASSERT_TRUE(ledger.release(first, 0));
  ASSERT_TRUE(ledger.release(second, 1));
  const auto third = ledger.enqueue();
  EXPECT_EQ(ledger.candidates(third), (std::vector<std::size_t>{0, 1}));
}

TEST(CpuLedgerTest, AUnitTakenElsewhereIsSkippedAndAWithdrawnTicketLeavesTheLine) {
  CpuLedger ledger(2);
  const auto first = ledger.enqueue();
  const auto second = ledger.enqueue();
  // Unit 0's CPU is locked by another process: the caller takes unit 1.
  ASSERT_TRUE(ledger.take(first, 1));
  ledger.withdraw(second);
  EXPECT_EQ(ledger.waiting(), 0u);
  const auto third = ledger.enqueue();
  EXPECT_EQ(ledger.candidates(third), (std::vector<std::size_t>{0}));
}

}  // namespace
}  // namespace kiln::runs
