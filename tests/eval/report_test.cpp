// The evaluation report (pure): ratios against -Oz, geomeans, reward, and
// the text and JSON it prints; and which benchmarks a run resolves to.
#include "tools/eval/report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tools/eval/benchmark_set.h"

namespace kiln::eval {
namespace {

BenchmarkResult row(std::string name, std::int64_t inst, std::int64_t oz, std::int64_t text,
                    std::int64_t textOz) {
  BenchmarkResult r;
  r.benchmark = std::move(name);
  r.passes = {3, 1};
  r.passNames = {"instcombine", "a\"quoted\"pass"};
  r.instCountInitial = 200;
  r.instCountO0 = 200;
  r.instCount = inst;
  r.instCountOz = oz;
  r.textSize = text;
  r.textSizeOz = textOz;
  return r;
}

TEST(EvalReport, RatiosGeomeansAndRewardFollowTheLeaderboard) {
  EvalReport report;
  report.results = {row("benchmark://x/a", 100, 110, 400, 400),
                    row("benchmark://x/b", 50, 40, 100, 200)};
  EXPECT_DOUBLE_EQ(report.results[0].instCountVsOz(), 1.1);
  EXPECT_DOUBLE_EQ(report.results[1].instCountVsOz(), 0.8);
  EXPECT_NEAR(report.geomeanInstCountVsOz(), std::sqrt(1.1 * 0.8), 1e-12);
  EXPECT_NEAR(report.geomeanTextSizeVsOz(), std::sqrt(1.0 * 2.0), 1e-12);
  // (initial - final) / (O0 - Oz): reaching -Oz's count is a reward of 1.
  EXPECT_DOUBLE_EQ(report.results[0].reward(), 100.0 / 90.0);
  BenchmarkResult same = row("benchmark://x/c", 5, 5, 0, 0);
  same.instCountO0 = same.instCountOz = 5;  // -Oz gains nothing: divide by 1
  same.instCountInitial = 5;
  EXPECT_DOUBLE_EQ(same.reward(), 0.0);
  EXPECT_DOUBLE_EQ(same.textSizeVsOz(), 1.0);  // 0 over 0
  EXPECT_DOUBLE_EQ(geomean({}), 1.0);
}

TEST(EvalReport, TableAndJsonNameEveryBenchmarkFailureAndFigure) {
  EvalReport report;
  report.agent = "greedy";
  report.seed = 5;
  report.stepBudget = 100;
  report.parallel = 2;
  report.results = {row("benchmark://x/a", 100, 110, 400, 400)};
  report.failures = {{"benchmark://x/gone", notFound("no benchmark gone")}};
  std::string table = formatTable(report);
  EXPECT_NE(table.find("benchmark://x/a"), std::string::npos);
  EXPECT_NE(table.find("1.100x"), std::string::npos);
  EXPECT_NE(table.find("NOT MEASURED: not found: no benchmark gone"), std::string::npos);
  EXPECT_NE(table.find("1 not measurable at all, LEFT OUT of the geomean"), std::string::npos);
  EXPECT_NE(table.find("100 steps per benchmark"), std::string::npos);
  std::string json = formatJson(report);
  EXPECT_NE(json.find("\"agent\":\"greedy\""), std::string::npos);
  EXPECT_NE(json.find("\"passes\":[\"instcombine\",\"a\\\"quoted\\\"pass\"]"), std::string::npos);
  EXPECT_NE(json.find("\"geomean_ir_instruction_count_vs_oz\":1.100000"), std::string::npos);
  EXPECT_NE(json.find("\"benchmark\":\"benchmark://x/gone\""), std::string::npos);
  EXPECT_EQ(json.back(), '\n');
}

TEST(EvalReport, FailedAndInvalidBenchmarksCountAtTheirUnoptimizedSize) {
  EvalReport report;
  BenchmarkResult valid = row("benchmark://x/a", 100, 110, 400, 400);
  valid.validation = {Validity::kValid, 3, ""};
  BenchmarkResult invalid = row("benchmark://x/b", 10, 40, 50, 200);  // "10x better": a miscompile
  invalid.textSizeO0 = 400;
  invalid.validation = {Validity::kInvalid, 2, "output: stdout differs"};
  BenchmarkResult failed = row("benchmark://x/c", 0, 50, 0, 100);
  failed.failure = disconnected("the worker died");
  failed.textSizeO0 = 300;
  report.results = {valid, invalid, failed};
  // The invalid state's 10 instructions and the failed one count as -O0's 200.
  EXPECT_DOUBLE_EQ(report.results[1].instCountVsOz(), 40.0 / 200.0);
  EXPECT_DOUBLE_EQ(report.results[1].textSizeVsOz(), 200.0 / 400.0);
  EXPECT_DOUBLE_EQ(report.results[1].reward(), 0.0);
  EXPECT_DOUBLE_EQ(report.results[2].instCountVsOz(), 50.0 / 200.0);
  EXPECT_NEAR(report.geomeanInstCountVsOz(), std::cbrt(1.1 * 0.2 * 0.25), 1e-12);
  EXPECT_EQ(report.count(Validity::kValid), 1u);
  EXPECT_EQ(report.count(Validity::kInvalid), 1u);
  EXPECT_EQ(report.failedCount(), 1u);

  const std::string table = formatTable(report);
  EXPECT_NE(table.find("valid (3)"), std::string::npos) << table;
  EXPECT_NE(table.find("invalid (2) (scored at -O0): output: stdout differs"), std::string::npos)
      << table;
  EXPECT_NE(table.find("FAILED (scored at -O0): disconnected: the worker died"), std::string::npos)
      << table;
  EXPECT_NE(table.find("1 valid, 1 invalid, 1 failed; invalid and failed benchmarks count at "
                       "-O0's size"),
            std::string::npos)
      << table;
  const std::string json = formatJson(report);
  EXPECT_NE(json.find("\"counts\":{\"valid\":1,\"verified_only\":0,\"invalid\":1,"
                      "\"unvalidated\":0,\"failed\":1,\"not_measured\":0}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"validity\":\"invalid\""), std::string::npos);
  EXPECT_NE(json.find("\"scored_unoptimized\":true"), std::string::npos);

  // The states: the failed benchmark has none; the invalid one says so.
  auto states = bestStates(report);
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].validity, "valid");
  EXPECT_EQ(states[1].validity, "invalid");
  auto parsed = client::parseStatesCsv(client::toCsv(states));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ((*parsed)[1].validity, "invalid");
}

TEST(EvalReport, AnUnvalidatedRunSaysSoOnEveryLine) {
  EvalReport report;
  report.validated = false;
  report.results = {row("benchmark://x/a", 100, 110, 400, 400),
                    row("benchmark://x/b", 50, 40, 100, 200)};
  const std::string table = formatTable(report);
  std::size_t lines = 0;
  for (std::size_t at = table.find("unvalidated"); at != std::string::npos;
       at = table.find("unvalidated", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u) << table;
  EXPECT_NE(table.find("2 UNVALIDATED (--no-validate)"), std::string::npos) << table;
  EXPECT_NE(formatJson(report).find("\"validated\":false"), std::string::npos);
}

TEST(EvalReport, BestStatesReadBackInTheStateFormat) {
  EvalReport report;
  BenchmarkResult a = row("benchmark://x/a", 100, 110, 400, 400);
  a.passNames = {"mem2reg", "gvn"};
  a.seconds = 1.5;
  report.results = {a};
  auto states = bestStates(report);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].commandline(), "mem2reg gvn");
  auto parsed = client::parseStatesCsv(client::toCsv(states));
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].benchmark, "benchmark://x/a");
  EXPECT_EQ((*parsed)[0].walltime, 1.5);
  EXPECT_DOUBLE_EQ(*(*parsed)[0].reward, a.reward());
}

TEST(BenchmarkSet, SeedRangesParseAndBadOnesSayWhy) {
  auto one = parseSeedRange("7");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first, 7u);
  EXPECT_EQ(one->count(), 1u);
  auto many = parseSeedRange("1-20");
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->count(), 20u);
  for (const char* bad :
       {"", "-", "1-", "x", "5-1", "1-999999999", "1 - 2", "-3", "1-2-3", "99999999999999999999"}) {
    auto parsed = parseSeedRange(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(std::string("'") + bad + "'"), std::string::npos);
  }
}

TEST(BenchmarkSet, DatasetsGeneratorsAndRepeats) {
  EXPECT_TRUE(isDatasetUri("benchmark://kiln-bench-v0"));
  EXPECT_TRUE(isDatasetUri("generator://csmith-v0/"));
  EXPECT_FALSE(isDatasetUri("benchmark://kiln-bench-v0/crc32"));
  EXPECT_FALSE(isDatasetUri("kiln-bench-v0"));
  EXPECT_FALSE(isDatasetUri("benchmark://"));
  EXPECT_TRUE(isGeneratorUri("generator://csmith-v0"));
  EXPECT_FALSE(isGeneratorUri("benchmark://kiln-bench-v0"));
  EXPECT_EQ(generatorBenchmarks("generator://csmith-v0/", SeedRange{3, 5}),
            (std::vector<std::string>{"generator://csmith-v0/3", "generator://csmith-v0/4",
                                      "generator://csmith-v0/5"}));
  EXPECT_EQ(withoutRepeats({"a", "b", "a", "c", "b"}), (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace kiln::eval
