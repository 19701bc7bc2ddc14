// One caller's quotas: concurrency, rate and batch size, each refused at
// once with a message naming its --keys field, and places given back.
#include <gtest/gtest.h>

#include "tools/tools_service/caller_gate.h"

namespace kiln::tools_service {
namespace {

using std::chrono::milliseconds;

bool says(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST(CallerGateTest, RefusesCallsOverItsConcurrencyUntilPlacesAreGivenBack) {
  CallerGate gate("a", GateLimits{2, 0, 8});
  const auto now = GateClock::now();
  auto first = gate.admit(1, 1, now);
  auto second = gate.admit(1, 1, now);
  ASSERT_TRUE(first.ok() && second.ok());
  auto third = gate.admit(1, 1, now);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), ErrorCode::kOverloaded);
  EXPECT_TRUE(says(third.status(), "concurrent=")) << third.status().message();
  { Admission done = std::move(first).value(); }
  EXPECT_EQ(gate.inFlight(), 1u);
  EXPECT_TRUE(gate.admit(1, 1, now).ok());
  EXPECT_EQ(gate.inFlight(), 1u);  // that admission ended with its statement
}

TEST(CallerGateTest, ABatchTakesAsManyPlacesAsItRunsAtOnce) {
  CallerGate gate("a", GateLimits{4, 0, 16});
  const auto now = GateClock::now();
  auto batch = gate.admit(16, 4, now);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(gate.inFlight(), 4u);
  EXPECT_FALSE(gate.admit(1, 1, now).ok());
}

TEST(CallerGateTest, RefusesABatchOverItsLimit) {
  CallerGate gate("a", GateLimits{4, 0, 8});
  auto big = gate.admit(9, 4, GateClock::now());
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(says(big.status(), "batch=")) << big.status().message();
  EXPECT_EQ(gate.inFlight(), 0u);
}

TEST(CallerGateTest, RefusesCallsOverItsRateAndAdmitsThemAgainAsTimePasses) {
  CallerGate gate("a", GateLimits{100, 10, 64});
  const auto start = GateClock::now();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(gate.admit(1, 1, start).ok()) << i;
  auto over = gate.admit(1, 1, start);
  ASSERT_FALSE(over.ok());
  EXPECT_TRUE(says(over.status(), "rate=")) << over.status().message();
  EXPECT_FALSE(gate.admit(1, 1, start + milliseconds(50)).ok());  // half a call back
  EXPECT_TRUE(gate.admit(1, 1, start + milliseconds(120)).ok());
  // A batch the rate can never allow at once is told to split.
  auto huge = gate.admit(11, 1, start + std::chrono::seconds(10));
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(says(huge.status(), "split it")) << huge.status().message();
}

TEST(CallerGateTest, KeyQuotasOverrideTheServiceDefaults) {
  const GateLimits defaults{16, 0, 64};
  const GateLimits limits = gateLimits(CallerQuota{2, 5, 0}, defaults);
  EXPECT_EQ(limits.maxConcurrent, 2u);
  EXPECT_DOUBLE_EQ(limits.callsPerSecond, 5);
  EXPECT_EQ(limits.maxBatch, 64u);
}

}  // namespace
}  // namespace kiln::tools_service
