// The fair-share policy without threads: which experiment's task runs next,
// given weights and the compile time each task took (fake durations).
#include <gtest/gtest.h>

#include <map>

#include "nesting/fair_share.h"

namespace kiln::nesting {
namespace {

using namespace std::chrono_literals;

// Pops `count` tasks, pretending each ran for `each`, and counts them by key.
std::map<std::string, int> serve(WeightedFairQueue& queue, int count, Duration each = 10ms) {
  std::map<std::string, int> served;
  for (int i = 0; i < count && !queue.empty(); ++i) {
    QueuedTask next = queue.pop();
    ++served[next.key];
    queue.finished(next.key, each);
  }
  return served;
}

void fill(WeightedFairQueue& queue, const std::string& key, int count) {
  for (int i = 0; i < count; ++i) queue.push(key, [] {});
}

TEST(FairShare, EqualWeightsAlternate) {
  WeightedFairQueue queue;
  fill(queue, "a", 50);
  fill(queue, "b", 50);
  auto served = serve(queue, 40);
  EXPECT_EQ(served["a"], 20);
  EXPECT_EQ(served["b"], 20);
}

TEST(FairShare, WeightsSplitTheSlots) {
  WeightedFairQueue queue;
  queue.setWeight("heavy", 3);
  queue.setWeight("light", 1);
  fill(queue, "heavy", 100);
  fill(queue, "light", 100);
  auto served = serve(queue, 80);
  EXPECT_NEAR(served["heavy"], 60, 2);
  EXPECT_NEAR(served["light"], 20, 2);
}

TEST(FairShare, AccountsForCompileTimeNotTaskCount) {
  WeightedFairQueue queue;
  fill(queue, "slow", 100);
  fill(queue, "fast", 100);
  // "slow" tasks take 4x longer: equal shares of time mean 4x fewer tasks.
  std::map<std::string, int> served;
  for (int i = 0; i < 100; ++i) {
    QueuedTask next = queue.pop();
    ++served[next.key];
    queue.finished(next.key, next.key == "slow" ? 40ms : 10ms);
  }
  EXPECT_NEAR(static_cast<double>(served["fast"]) / served["slow"], 4.0, 0.6);
}

TEST(FairShare, IdleExperimentLeavesAllSlotsToOthers) {
  WeightedFairQueue queue;
  fill(queue, "busy", 30);
  auto served = serve(queue, 30);
  EXPECT_EQ(served["busy"], 30);
  EXPECT_TRUE(queue.empty());
}

TEST(FairShare, ReturningExperimentIsServedAtTheNextSlotWithoutBursting) {
  WeightedFairQueue queue;
  fill(queue, "steady", 200);
  serve(queue, 100);  // "lull" is idle meanwhile
  fill(queue, "lull", 100);
  // Served at once (bounded delay)...
  EXPECT_EQ(queue.pop().key, "lull");
  queue.finished("lull", 10ms);
  // ...but without credit for its idle time: from now on the two alternate.
  auto served = serve(queue, 40);
  EXPECT_NEAR(served["lull"], 20, 1);
  EXPECT_NEAR(served["steady"], 20, 1);
}

TEST(FairShare, FifoWithinAnExperiment) {
  WeightedFairQueue queue;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) queue.push("a", [&order, i] { order.push_back(i); });
  while (!queue.empty()) {
    QueuedTask next = queue.pop();
    next.task();
    queue.finished(next.key, 1ms);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(FairShare, SeveralSlotsFreeingAtOnceDoNotAllPickOneExperiment) {
  WeightedFairQueue queue;
  fill(queue, "a", 10);
  fill(queue, "b", 10);
  // Four slots pop before any task finishes: the charge at pop spreads them.
  std::map<std::string, int> popped;
  for (int i = 0; i < 4; ++i) ++popped[queue.pop().key];
  EXPECT_EQ(popped["a"], 2);
  EXPECT_EQ(popped["b"], 2);
}

TEST(FairShare, ForgetsReleasedExperimentsOnly) {
  WeightedFairQueue queue;
  queue.setWeight("gone", 5);
  queue.setWeight("kept", 2);
  fill(queue, "queued", 1);
  queue.forgetAllBut(std::map<std::string, int>{{"kept", 1}});
  EXPECT_EQ(queue.size(), 1u);  // an experiment with queued work is kept
  EXPECT_EQ(queue.pop().key, "queued");
}

}  // namespace
}  // namespace kiln::nesting
