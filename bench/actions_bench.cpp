#include "bench/actions_bench.h"

#include <fmt/format.h>

#include <algorithm>

#include "compilers/llvm_engine/action_campaign.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/generators.h"

namespace kiln::bench {
namespace {

Result<std::vector<llvm_engine::CampaignProgram>> campaignPrograms(
    const ActionsBenchOptions& options) {
  std::vector<llvm_engine::CampaignProgram> programs;
  for (const bundled::EmbeddedBenchmark& b : bundled::kilnBenchV0()) {
    programs.push_back(
        {"kiln-bench-v0/" + std::string(b.name),
         std::string(reinterpret_cast<const char*>(b.bitcode.data()), b.bitcode.size())});
  }
  const datasets::DatasetConfig config;
  for (unsigned seed = 1; seed <= options.csmithPrograms; ++seed) {
    auto generated = datasets::generateCsmith(config, seed);
    if (!generated.ok()) {
      return Status(generated.status().code(),
                    fmt::format("csmith seed {}: {}", seed, generated.status().message()));
    }
    programs.push_back({fmt::format("csmith-v0/{}", seed), std::move(generated->bytes)});
  }
  return programs;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " ") + name;
  return text;
}

}  // namespace

Result<Report> runActionsBench(const ActionsBenchOptions& options) {
  if (options.validate) return runValidationBench(options);
  KILN_ASSIGN_OR_RETURN(auto table, llvm_engine::PassTable::fromRegistry());
  KILN_ASSIGN_OR_RETURN(auto programs, campaignPrograms(options));
  llvm_engine::CampaignOptions campaign;
  campaign.episodes = options.episodes;
  campaign.steps = options.steps;
  campaign.seed = options.seed;
  campaign.timeLimit =
      std::chrono::milliseconds(static_cast<std::int64_t>(options.maxSeconds * 1000));
  KILN_ASSIGN_OR_RETURN(llvm_engine::CampaignReport result,
                        llvm_engine::runActionCampaign(table, programs, campaign));

  Report report;
  report.title = fmt::format(
      "kiln bench actions: random episodes over {} programs ({} kiln-bench-v0, {} csmith), "
      "{} actions, judged against 0 invalid modules and 0 crashes",
      programs.size(), programs.size() - options.csmithPrograms, options.csmithPrograms,
      table->size());
  Row summary;
  summary.text = {{"figure", "campaign"}};
  summary.numbers = {{"episodes", static_cast<double>(result.episodes)},
                     {"steps", static_cast<double>(result.steps)},
                     {"invalid_modules", static_cast<double>(result.invalidModules)},
                     {"crashes", static_cast<double>(result.crashes)},
                     {"errors", static_cast<double>(result.otherErrors)},
                     {"refusals", static_cast<double>(result.refusals)},
                     {"seconds", result.seconds},
                     {"steps_per_s", result.seconds > 0 ? result.steps / result.seconds : 0}};
  report.rows.push_back(std::move(summary));
  for (const llvm_engine::CampaignFailure& failure : result.failures) {
    Row row;
    row.text = {{"figure", "failure"},
                {"kind", std::string(llvm_engine::failureKindName(failure.kind))},
                {"program", failure.program},
                {"pass", failure.sequence.empty() ? "" : failure.sequence.back()},
                {"sequence", joined(failure.sequence)},
                {"message", failure.message.substr(0, 300)}};
    report.rows.push_back(std::move(row));
  }
  std::vector<llvm_engine::PassTiming> timings = result.timings;
  std::stable_sort(timings.begin(), timings.end(),
                   [](const auto& a, const auto& b) { return a.totalMs > b.totalMs; });
  const std::size_t shown =
      options.json ? timings.size() : std::min<std::size_t>(timings.size(), options.slowestPasses);
  for (std::size_t i = 0; i < shown; ++i) {
    const llvm_engine::PassTiming& t = timings[i];
    Row row;
    row.text = {{"figure", "pass"}, {"pass", t.pass}};
    row.numbers = {{"runs", static_cast<double>(t.runs)},
                   {"changed", static_cast<double>(t.changed)},
                   {"mean_ms", t.runs ? t.totalMs / static_cast<double>(t.runs) : 0},
                   {"max_ms", t.maxMs},
                   {"total_ms", t.totalMs}};
    report.rows.push_back(std::move(row));
  }
  report.notes.push_back(
      "in one process, one thread: each step runs the action's pipeline as one opt-19 call "
      "would, verifies the module and reads it back from bitcode (the env's own step)");
  if (!options.json && shown < timings.size()) {
    report.notes.push_back(fmt::format("pass rows: the {} slowest by total time (--json: all {})",
                                       shown, timings.size()));
  }
  if (result.crashes > 0) {
    report.notes.push_back("a crash was caught in this process: later figures are suspect");
  }
  return report;
}

}  // namespace kiln::bench
