#include "tools/eval/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/base/json_text.h"

namespace kiln::eval {
namespace {

template <class Member>
double geomeanOf(const std::vector<BenchmarkResult>& results, Member member) {
  std::vector<double> values;
  values.reserve(results.size());
  for (const BenchmarkResult& result : results) values.push_back((result.*member)());
  return geomean(values);
}

std::string budgetText(const EvalReport& report) {
  std::vector<std::string> parts;
  if (report.stepBudget != 0) parts.push_back(fmt::format("{} steps", report.stepBudget));
  if (report.timeBudget > 0) parts.push_back(fmt::format("{:g} s", report.timeBudget));
  if (parts.empty()) return "no budget";
  return fmt::format("{} per benchmark", fmt::join(parts, " or "));
}

}  // namespace

double sizeRatio(std::int64_t reference, std::int64_t size) {
  if (size <= 0) return reference <= 0 ? 1.0 : static_cast<double>(reference);
  return static_cast<double>(std::max<std::int64_t>(reference, 0)) / static_cast<double>(size);
}

double BenchmarkResult::reward() const {
  return static_cast<double>(instCountInitial - instCount) /
         static_cast<double>(std::max<std::int64_t>(instCountO0 - instCountOz, 1));
}

double BenchmarkResult::instCountVsOz() const { return sizeRatio(instCountOz, instCount); }
double BenchmarkResult::textSizeVsOz() const { return sizeRatio(textSizeOz, textSize); }

double EvalReport::geomeanInstCountVsOz() const {
  return geomeanOf(results, &BenchmarkResult::instCountVsOz);
}
double EvalReport::geomeanTextSizeVsOz() const {
  return geomeanOf(results, &BenchmarkResult::textSizeVsOz);
}

double geomean(std::span<const double> values) {
  if (values.empty()) return 1.0;
  double logSum = 0;
  for (double value : values) logSum += std::log(std::max(value, 1e-12));
  return std::exp(logSum / static_cast<double>(values.size()));
}

std::vector<client::EnvState> bestStates(const EvalReport& report) {
  std::vector<client::EnvState> states;
  states.reserve(report.results.size());
  for (const BenchmarkResult& b : report.results) {
    states.push_back(client::EnvState{b.benchmark, b.passNames, b.seconds, b.reward()});
  }
  return states;
}

std::string formatTable(const EvalReport& r) {
  std::string out =
      fmt::format("{:<42} {:>6} {:>8} {:>8} {:>7} {:>8} {:>8} {:>7} {:>8}\n", "BENCHMARK", "PASSES",
                  "IR INSTS", "-Oz", "vs -Oz", ".TEXT B", "-Oz B", "vs -Oz", "SECONDS");
  for (const BenchmarkResult& b : r.results) {
    out += fmt::format("{:<42} {:>6} {:>8} {:>8} {:>6.3f}x {:>8} {:>8} {:>6.3f}x {:>8.2f}\n",
                       b.benchmark, b.passes.size(), b.instCount, b.instCountOz, b.instCountVsOz(),
                       b.textSize, b.textSizeOz, b.textSizeVsOz(), b.seconds);
  }
  for (const BenchmarkFailure& f : r.failures) {
    out += fmt::format("{:<42} FAILED: {}\n", f.benchmark, f.status.toString());
  }
  out += fmt::format(
      "agent {} (seed {}), {}, {} benchmarks in parallel: geomean {:.3f}x IR instructions and "
      "{:.3f}x .text bytes vs -Oz (above 1x: smaller than -Oz) over {} benchmarks in {:.1f} s",
      r.agent, r.seed, budgetText(r), r.parallel, r.geomeanInstCountVsOz(), r.geomeanTextSizeVsOz(),
      r.results.size(), r.seconds);
  if (!r.failures.empty()) out += fmt::format("; {} failed", r.failures.size());
  out += "\n";
  return out;
}

std::string formatJson(const EvalReport& r) {
  std::string out = fmt::format(
      "{{\"agent\":\"{}\",\"seed\":{},\"step_budget\":{},\"time_budget_seconds\":{},"
      "\"parallel\":{},\"seconds\":{:.3f},\"geomean_ir_instruction_count_vs_oz\":{:.6f},"
      "\"geomean_text_size_vs_oz\":{:.6f},\"benchmarks\":[",
      jsonEscape(r.agent), r.seed, r.stepBudget, r.timeBudget, r.parallel, r.seconds,
      r.geomeanInstCountVsOz(), r.geomeanTextSizeVsOz());
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const BenchmarkResult& b = r.results[i];
    std::vector<std::string> names;
    for (const std::string& name : b.passNames) names.push_back("\"" + jsonEscape(name) + "\"");
    out += fmt::format(
        "{}{{\"benchmark\":\"{}\",\"passes\":[{}],\"ir_instruction_count\":{},"
        "\"ir_instruction_count_initial\":{},\"ir_instruction_count_o0\":{},"
        "\"ir_instruction_count_oz\":{},\"ir_instruction_count_vs_oz\":{:.6f},"
        "\"text_size_bytes\":{},\"text_size_oz\":{},\"text_size_vs_oz\":{:.6f},"
        "\"reward\":{:.6f},\"ir_sha1\":\"{}\",\"seconds\":{:.3f},\"steps\":{},\"queries\":{}}}",
        i == 0 ? "" : ",", jsonEscape(b.benchmark), fmt::join(names, ","), b.instCount,
        b.instCountInitial, b.instCountO0, b.instCountOz, b.instCountVsOz(), b.textSize,
        b.textSizeOz, b.textSizeVsOz(), b.reward(), jsonEscape(b.irSha1), b.seconds, b.steps,
        b.queries);
  }
  out += "],\"failures\":[";
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    out += fmt::format("{}{{\"benchmark\":\"{}\",\"error\":\"{}\"}}", i == 0 ? "" : ",",
                       jsonEscape(r.failures[i].benchmark),
                       jsonEscape(r.failures[i].status.toString()));
  }
  out += "]}\n";
  return out;
}

}  // namespace kiln::eval
