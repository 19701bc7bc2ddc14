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

bool BenchmarkResult::scoredUnoptimized() const {
  return !failure.ok() || validation.validity == Validity::kInvalid;
}

double BenchmarkResult::reachedReward() const {
  return static_cast<double>(instCountInitial - instCount) /
         static_cast<double>(std::max<std::int64_t>(instCountO0 - instCountOz, 1));
}

double BenchmarkResult::reward() const { return scoredUnoptimized() ? 0 : reachedReward(); }

double BenchmarkResult::instCountVsOz() const {
  return sizeRatio(instCountOz, scoredUnoptimized() ? instCountO0 : instCount);
}
double BenchmarkResult::textSizeVsOz() const {
  return sizeRatio(textSizeOz, scoredUnoptimized() ? textSizeO0 : textSize);
}

std::size_t EvalReport::count(Validity validity) const {
  return static_cast<std::size_t>(std::count_if(results.begin(), results.end(), [&](const auto& r) {
    return r.failure.ok() && r.validation.validity == validity;
  }));
}

std::size_t EvalReport::failedCount() const {
  return static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.failure.ok(); }));
}

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
    if (!b.failure.ok()) continue;
    // An invalid state's own reward: the file says what it reached, and
    // that it is invalid.
    states.push_back(client::EnvState{b.benchmark, b.passNames, b.seconds, b.reachedReward(),
                                      std::string(validityName(b.validation.validity))});
  }
  return states;
}

namespace {

// The VALID column: the verdict, with the inputs compared when it ran.
std::string validityCell(const BenchmarkResult& b) {
  if (b.validation.validity == Validity::kValid || b.validation.validity == Validity::kInvalid) {
    return fmt::format("{} ({})", validityName(b.validation.validity), b.validation.inputs);
  }
  return std::string(validityName(b.validation.validity));
}

// How the summary counted what is not a valid state of the agent's own.
std::string scoringText(const EvalReport& r) {
  std::vector<std::string> parts;
  if (r.validated) {
    parts.push_back(fmt::format("{} valid", r.count(Validity::kValid)));
    if (std::size_t n = r.count(Validity::kVerifiedOnly); n != 0) {
      parts.push_back(fmt::format("{} verified only (not runnable against -O0)", n));
    }
    parts.push_back(fmt::format("{} invalid", r.count(Validity::kInvalid)));
  } else {
    parts.push_back(fmt::format("{} UNVALIDATED (--no-validate)", r.count(Validity::kUnvalidated)));
  }
  parts.push_back(fmt::format("{} failed", r.failedCount()));
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  if (r.count(Validity::kInvalid) + r.failedCount() != 0) {
    text += "; invalid and failed benchmarks count at -O0's size";
  }
  if (!r.failures.empty()) {
    text += fmt::format("; {} not measurable at all, LEFT OUT of the geomean", r.failures.size());
  }
  return text;
}

}  // namespace

std::string formatTable(const EvalReport& r) {
  std::string out = fmt::format("{:<42} {:>6} {:>8} {:>8} {:>7} {:>8} {:>8} {:>7} {:>8}  {}\n",
                                "BENCHMARK", "PASSES", "IR INSTS", "-Oz", "vs -Oz", ".TEXT B",
                                "-Oz B", "vs -Oz", "SECONDS", "VALID (INPUTS)");
  for (const BenchmarkResult& b : r.results) {
    if (!b.failure.ok()) {
      out += fmt::format(
          "{:<42} {:>6} {:>8} {:>8} {:>6.3f}x {:>8} {:>8} {:>6.3f}x {:>8}  FAILED "
          "(scored at -O0): {}\n",
          b.benchmark, "-", b.instCountO0, b.instCountOz, b.instCountVsOz(), b.textSizeO0,
          b.textSizeOz, b.textSizeVsOz(), "-", b.failure.toString());
      continue;
    }
    out += fmt::format("{:<42} {:>6} {:>8} {:>8} {:>6.3f}x {:>8} {:>8} {:>6.3f}x {:>8.2f}  {}",
                       b.benchmark, b.passes.size(), b.instCount, b.instCountOz, b.instCountVsOz(),
                       b.textSize, b.textSizeOz, b.textSizeVsOz(), b.seconds, validityCell(b));
    if (b.validation.validity == Validity::kInvalid) out += " (scored at -O0)";
    if (!b.validation.detail.empty()) out += ": " + b.validation.detail;
    out += "\n";
  }
  for (const BenchmarkFailure& f : r.failures) {
    out += fmt::format("{:<42} NOT MEASURED: {}\n", f.benchmark, f.status.toString());
  }
  out += fmt::format(
      "agent {} (seed {}), {}, {} benchmarks in parallel: geomean {:.3f}x IR instructions and "
      "{:.3f}x .text bytes vs -Oz (above 1x: smaller than -Oz) over {} benchmarks in {:.1f} s; "
      "{}\n",
      r.agent, r.seed, budgetText(r), r.parallel, r.geomeanInstCountVsOz(), r.geomeanTextSizeVsOz(),
      r.results.size(), r.seconds, scoringText(r));
  return out;
}

std::string formatJson(const EvalReport& r) {
  std::string out = fmt::format(
      "{{\"agent\":\"{}\",\"seed\":{},\"step_budget\":{},\"time_budget_seconds\":{},"
      "\"parallel\":{},\"validated\":{},\"seconds\":{:.3f},"
      "\"geomean_ir_instruction_count_vs_oz\":{:.6f},\"geomean_text_size_vs_oz\":{:.6f},"
      "\"counts\":{{\"valid\":{},\"verified_only\":{},\"invalid\":{},\"unvalidated\":{},"
      "\"failed\":{},\"not_measured\":{}}},\"scoring\":\"{}\",\"benchmarks\":[",
      jsonEscape(r.agent), r.seed, r.stepBudget, r.timeBudget, r.parallel,
      r.validated ? "true" : "false", r.seconds, r.geomeanInstCountVsOz(), r.geomeanTextSizeVsOz(),
      r.count(Validity::kValid), r.count(Validity::kVerifiedOnly), r.count(Validity::kInvalid),
      r.count(Validity::kUnvalidated), r.failedCount(), r.failures.size(),
      jsonEscape(scoringText(r)));
  for (std::size_t i = 0; i < r.results.size(); ++i) {
    const BenchmarkResult& b = r.results[i];
    std::vector<std::string> names;
    for (const std::string& name : b.passNames) names.push_back("\"" + jsonEscape(name) + "\"");
    out += fmt::format(
        "{}{{\"benchmark\":\"{}\",\"passes\":[{}],\"ir_instruction_count\":{},"
        "\"ir_instruction_count_initial\":{},\"ir_instruction_count_o0\":{},"
        "\"ir_instruction_count_oz\":{},\"ir_instruction_count_vs_oz\":{:.6f},"
        "\"text_size_bytes\":{},\"text_size_oz\":{},\"text_size_vs_oz\":{:.6f},"
        "\"reward\":{:.6f},\"ir_sha1\":\"{}\",\"seconds\":{:.3f},\"steps\":{},\"queries\":{},"
        "\"text_size_o0\":{},\"ir_instruction_count_o3\":{},\"validity\":\"{}\","
        "\"validation_inputs\":{},"
        "\"validation_detail\":\"{}\",\"scored_unoptimized\":{},\"error\":\"{}\"}}",
        i == 0 ? "" : ",", jsonEscape(b.benchmark), fmt::join(names, ","), b.instCount,
        b.instCountInitial, b.instCountO0, b.instCountOz, b.instCountVsOz(), b.textSize,
        b.textSizeOz, b.textSizeVsOz(), b.reward(), jsonEscape(b.irSha1), b.seconds, b.steps,
        b.queries, b.textSizeO0, b.instCountO3, validityName(b.validation.validity),
        b.validation.inputs, jsonEscape(b.validation.detail),
        b.scoredUnoptimized() ? "true" : "false",
        b.failure.ok() ? "" : jsonEscape(b.failure.toString()));
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
