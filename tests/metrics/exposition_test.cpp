// The Prometheus text format 0.0.4, checked against expectations written by
// hand from the specification: HELP/TYPE lines, label escaping, number
// spelling and the histogram series (_bucket with le, +Inf, _sum, _count).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/metrics/exposition.h"
#include "common/metrics/registry.h"

namespace kiln::metrics {
namespace {

TEST(ExpositionTest, EscapesHelpAndLabelValuesAsTheSpecSays) {
  // HELP escapes only backslash and newline; a double quote stays as is.
  EXPECT_EQ(escapeHelp("a \\ b\nc \"d\""), "a \\\\ b\\nc \"d\"");
  // Label values escape backslash, double quote and newline.
  EXPECT_EQ(escapeLabelValue("a \\ b\nc \"d\""), "a \\\\ b\\nc \\\"d\\\"");
  EXPECT_EQ(escapeLabelValue(""), "");
  EXPECT_EQ(escapeLabelValue("plain-text_1"), "plain-text_1");
  // Prometheus refuses a scrape with a label value that is not UTF-8 (found
  // by fuzz_dashboard_status: endpoints and experiment names are any bytes).
  EXPECT_EQ(escapeLabelValue("n\xC3\xBC \xFF\"\xC0\xAF"),
            "n\xC3\xBC \xEF\xBF\xBD\\\"\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ExpositionTest, SpellsNumbersTheWayParsersReadThem) {
  EXPECT_EQ(formatValue(0), "0");
  EXPECT_EQ(formatValue(3), "3");
  EXPECT_EQ(formatValue(-2.5), "-2.5");
  EXPECT_EQ(formatValue(0.005), "0.005");
  EXPECT_EQ(formatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(formatValue(std::nan("")), "NaN");
  // Shortest text that reads back to the same double.
  double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(formatValue(third)), third);
  EXPECT_EQ(std::stod(formatValue(1e300)), 1e300);
}

TEST(ExpositionTest, ValidatesNamesLikeThePrometheusDataModel) {
  EXPECT_TRUE(isValidMetricName("kiln_steps_total"));
  EXPECT_TRUE(isValidMetricName("a:b_c9"));
  EXPECT_TRUE(isValidMetricName("_x"));
  EXPECT_FALSE(isValidMetricName(""));
  EXPECT_FALSE(isValidMetricName("9lives"));
  EXPECT_FALSE(isValidMetricName("has-dash"));
  EXPECT_FALSE(isValidMetricName("has space"));
  EXPECT_FALSE(isValidMetricName("new\nline"));
  EXPECT_TRUE(isValidLabelName("experiment"));
  EXPECT_TRUE(isValidLabelName("_private"));
  EXPECT_FALSE(isValidLabelName("__reserved"));
  EXPECT_FALSE(isValidLabelName("a:b"));  // colons only in metric names
  EXPECT_FALSE(isValidLabelName("1a"));
  EXPECT_FALSE(isValidLabelName(""));
}

TEST(ExpositionTest, RendersCounterAndGaugeFamiliesExactly) {
  FamilySnapshot counter;
  counter.name = "kiln_steps_total";
  counter.help = "Steps served.";
  counter.type = MetricType::kCounter;
  counter.labelNames = {"experiment", "kind"};
  counter.series = {{{"exp-a", "noop"}, 12, {}, 0}, {{"b \"quoted\"\n", "llvm\\x"}, 0.5, {}, 0}};
  FamilySnapshot gauge;
  gauge.name = "kiln_sessions";
  gauge.help = "Live sessions\nper host \\ now.";
  gauge.type = MetricType::kGauge;
  gauge.series = {{{}, -3, {}, 0}};
  FamilySnapshot empty;  // a labelled family nobody used yet: nothing to show
  empty.name = "kiln_unused";
  empty.help = "x";
  empty.labelNames = {"experiment"};

  EXPECT_EQ(renderText({counter, gauge, empty}),
            "# HELP kiln_steps_total Steps served.\n"
            "# TYPE kiln_steps_total counter\n"
            "kiln_steps_total{experiment=\"exp-a\",kind=\"noop\"} 12\n"
            "kiln_steps_total{experiment=\"b \\\"quoted\\\"\\n\",kind=\"llvm\\\\x\"} 0.5\n"
            "# HELP kiln_sessions Live sessions\\nper host \\\\ now.\n"
            "# TYPE kiln_sessions gauge\n"
            "kiln_sessions -3\n");
}

TEST(ExpositionTest, RendersHistogramBucketsCumulativelyWithInfSumAndCount) {
  FamilySnapshot histogram;
  histogram.name = "kiln_step_seconds";
  histogram.help = "Step latency.";
  histogram.type = MetricType::kHistogram;
  histogram.labelNames = {"experiment"};
  histogram.bounds = {0.001, 0.01, 1};
  histogram.series = {{{"e"}, 0, {1, 3, 3, 4}, 2.5}};
  EXPECT_EQ(renderText({histogram}),
            "# HELP kiln_step_seconds Step latency.\n"
            "# TYPE kiln_step_seconds histogram\n"
            "kiln_step_seconds_bucket{experiment=\"e\",le=\"0.001\"} 1\n"
            "kiln_step_seconds_bucket{experiment=\"e\",le=\"0.01\"} 3\n"
            "kiln_step_seconds_bucket{experiment=\"e\",le=\"1\"} 3\n"
            "kiln_step_seconds_bucket{experiment=\"e\",le=\"+Inf\"} 4\n"
            "kiln_step_seconds_sum{experiment=\"e\"} 2.5\n"
            "kiln_step_seconds_count{experiment=\"e\"} 4\n");
}

TEST(ExpositionTest, RegistryRendersWhatWasObservedInNameOrder) {
  Registry registry;
  auto* steps = *registry.counter("kiln_steps_total", "Steps served.", {"experiment"});
  auto* latency = *registry.histogram("kiln_step_seconds", "Step latency.", {0.1, 1});
  auto* up = *registry.gauge("kiln_up", "1 while serving.");
  (*steps->withLabels({"b"}))->increment(2);
  (*steps->withLabels({"a"}))->increment();
  Histogram* h = *latency->withLabels({});
  h->observe(0.1);  // le is inclusive: counts in the 0.1 bucket
  h->observe(0.5);
  h->observe(7);
  (*up->withLabels({}))->set(1);
  EXPECT_EQ(registry.renderText(),
            "# HELP kiln_step_seconds Step latency.\n"
            "# TYPE kiln_step_seconds histogram\n"
            "kiln_step_seconds_bucket{le=\"0.1\"} 1\n"
            "kiln_step_seconds_bucket{le=\"1\"} 2\n"
            "kiln_step_seconds_bucket{le=\"+Inf\"} 3\n"
            "kiln_step_seconds_sum 7.6\n"
            "kiln_step_seconds_count 3\n"
            "# HELP kiln_steps_total Steps served.\n"
            "# TYPE kiln_steps_total counter\n"
            "kiln_steps_total{experiment=\"a\"} 1\n"
            "kiln_steps_total{experiment=\"b\"} 2\n"
            "# HELP kiln_up 1 while serving.\n"
            "# TYPE kiln_up gauge\n"
            "kiln_up 1\n");
}

}  // namespace
}  // namespace kiln::metrics
