// The metrics Registry: registration rules and hostile names, the series
// bound, counters that never go down, and exact totals under concurrent
// updates from many threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "common/metrics/registry.h"

namespace kiln::metrics {
namespace {

TEST(RegistryTest, RejectsBadNamesLabelsAndBoundsWithClearMessages) {
  Registry registry;
  auto badName = registry.counter("kiln-steps", "x");
  ASSERT_FALSE(badName.ok());
  EXPECT_EQ(badName.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(badName.status().message().find("kiln-steps"), std::string::npos);
  EXPECT_FALSE(registry.counter("", "x").ok());
  EXPECT_FALSE(registry.counter("a\nb", "x").ok());
  EXPECT_FALSE(registry.gauge("g", "x", {"__name__"}).ok());
  EXPECT_FALSE(registry.gauge("g", "x", {"bad label"}).ok());
  auto twice = registry.gauge("g", "x", {"a", "a"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("twice"), std::string::npos);
  EXPECT_FALSE(registry.histogram("h", "x", {1, 2}, {"le"}).ok());
  EXPECT_FALSE(registry.histogram("h", "x", {2, 1}).ok());
  EXPECT_FALSE(registry.histogram("h", "x", {1, 1}).ok());
  EXPECT_FALSE(registry.histogram("h", "x", {1, std::numeric_limits<double>::infinity()}).ok());
  EXPECT_FALSE(registry.histogram("h", "x", {std::nan("")}).ok());
  // None of the failures left a family behind.
  EXPECT_TRUE(registry.snapshot().empty());
}

TEST(RegistryTest, SameDefinitionReturnsSameFamilyAndConflictsFail) {
  Registry registry;
  auto first = registry.counter("kiln_errors_total", "Errors.", {"kind"});
  auto second = registry.counter("kiln_errors_total", "Errors.", {"kind"});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_FALSE(registry.gauge("kiln_errors_total", "Errors.", {"kind"}).ok());
  EXPECT_FALSE(registry.counter("kiln_errors_total", "Errors.", {"other"}).ok());
  ASSERT_TRUE(registry.histogram("lat", "x", {1}).ok());
  EXPECT_FALSE(registry.histogram("lat", "x", {2}).ok());
  // A histogram's _count/_sum/_bucket series are taken.
  auto clash = registry.counter("lat_count", "x");
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("lat"), std::string::npos);
  ASSERT_TRUE(registry.gauge("q_sum", "x").ok());
  EXPECT_FALSE(registry.histogram("q", "x", {1}).ok());
}

TEST(RegistryTest, WrongLabelCountAndTooManySeriesFailWithoutGrowing) {
  RegistryOptions options;
  options.maxSeriesPerFamily = 3;
  Registry registry(options);
  auto* family = *registry.counter("c", "x", {"experiment", "kind"});
  auto wrong = family->withLabels({"only-one"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), ErrorCode::kInvalidArgument);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(family->withLabels({std::to_string(i), "k"}).ok());
  auto full = family->withLabels({"3", "k"});
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), ErrorCode::kOverloaded);
  // Existing series keep working once the family is full.
  auto again = family->withLabels({"1", "k"});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(registry.snapshot()[0].series.size(), 3u);
}

TEST(RegistryTest, CountersNeverGoDownGaugesDo) {
  Counter counter;
  counter.increment(2);
  counter.increment(-5);
  counter.increment(std::nan(""));
  EXPECT_EQ(counter.value(), 2);
  Gauge gauge;
  gauge.set(5);
  gauge.decrement(7);
  gauge.increment(0.5);
  EXPECT_EQ(gauge.value(), -1.5);
}

TEST(RegistryTest, BucketHelpersCheckTheirArguments) {
  auto exponential = exponentialBuckets(0.001, 10, 4);
  ASSERT_TRUE(exponential.ok());
  ASSERT_EQ(exponential->size(), 4u);
  EXPECT_DOUBLE_EQ((*exponential)[3], 1.0);
  EXPECT_FALSE(exponentialBuckets(0, 2, 3).ok());
  EXPECT_FALSE(exponentialBuckets(1, 1, 3).ok());
  EXPECT_FALSE(exponentialBuckets(1, 2, 0).ok());
  EXPECT_FALSE(exponentialBuckets(1e300, 1e300, 5).ok());  // overflows to +Inf
  auto linear = linearBuckets(-1, 0.5, 5);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(*linear, (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_FALSE(linearBuckets(0, 0, 3).ok());
  EXPECT_FALSE(linearBuckets(0, -1, 3).ok());
}

TEST(RegistryTest, HistogramIgnoresNaNAndCountsInclusiveUpperBounds) {
  Histogram histogram({1, 2});
  histogram.observe(1);
  histogram.observe(2);
  histogram.observe(2.0000001);
  histogram.observe(-100);
  histogram.observe(std::nan(""));
  std::vector<std::uint64_t> cumulative;
  double sum = 0;
  histogram.read(cumulative, sum);
  EXPECT_EQ(cumulative, (std::vector<std::uint64_t>{2, 3, 4}));
  EXPECT_EQ(histogram.count(), 4u);
  EXPECT_NEAR(sum, -94.9999999, 1e-9);
}

TEST(RegistryTest, ConcurrentUpdatesAndScrapesLoseNothing) {
  Registry registry;
  auto* steps = *registry.counter("steps_total", "x", {"experiment"});
  auto* depth = *registry.gauge("depth", "x");
  auto* latency = *registry.histogram("latency", "x", {0.5, 1.5});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  Gauge* gauge = *depth->withLabels({});
  Histogram* histogram = *latency->withLabels({});
  std::atomic<bool> done{false};
  // A scraper reads all along, as Prometheus would.
  std::thread scraper([&] {
    int scrapes = 0;
    while (!done.load() && scrapes < 100000) {
      EXPECT_FALSE(registry.renderText().empty());
      ++scrapes;
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Series are created concurrently too (two threads share each one).
      Counter* counter = *steps->withLabels({"exp-" + std::to_string(t % 4)});
      for (int i = 0; i < kPerThread; ++i) {
        counter->increment();
        gauge->increment();
        gauge->decrement();
        histogram->observe(i % 3);  // 0, 1, 2 -> one per bucket
      }
    });
  }
  for (auto& thread : threads) thread.join();
  done.store(true);
  scraper.join();
  auto snapshot = registry.snapshot();
  ASSERT_EQ(snapshot.size(), 3u);
  // Name order: depth, latency, steps_total.
  EXPECT_EQ(snapshot[0].series[0].value, 0);
  const auto& h = snapshot[1].series[0];
  std::uint64_t total = std::uint64_t{kThreads} * kPerThread;
  EXPECT_EQ(h.cumulativeCounts.back(), total);
  std::uint64_t zeros = std::uint64_t{kThreads} * ((kPerThread + 2) / 3);
  EXPECT_EQ(h.cumulativeCounts[0], zeros);
  ASSERT_EQ(snapshot[2].series.size(), 4u);
  for (const auto& series : snapshot[2].series) EXPECT_EQ(series.value, 2.0 * kPerThread);
}

}  // namespace
}  // namespace kiln::metrics
