#include "compilers/llvm_engine/action_campaign.h"

#include <algorithm>
#include <random>

#include "compilers/llvm_engine/module_state.h"

namespace kiln::llvm_engine {
namespace {

using Clock = std::chrono::steady_clock;

FailureKind classify(const Status& status) {
  if (status.message().find("crashed with signal") != std::string::npos) return FailureKind::kCrash;
  if (status.message().find("invalid module") != std::string::npos) {
    return FailureKind::kInvalidModule;
  }
  return FailureKind::kOtherError;
}

}  // namespace

std::string_view failureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kInvalidModule:
      return "invalid module";
    case FailureKind::kCrash:
      return "crash";
    case FailureKind::kOtherError:
      return "error";
  }
  return "?";
}

Result<CampaignReport> runActionCampaign(const std::shared_ptr<const PassTable>& table,
                                         const std::vector<CampaignProgram>& programs,
                                         const CampaignOptions& options) {
  if (programs.empty()) return invalidArgument("an action campaign needs at least one program");
  // Parsed and verified once; each episode starts from a clone.
  std::vector<std::unique_ptr<ModuleState>> starts;
  for (const CampaignProgram& program : programs) {
    auto state = ModuleState::fromBitcode(table, program.bitcode, program.name);
    if (!state.ok()) {
      return invalidArgument("campaign program " + program.name + ": " + state.status().message());
    }
    starts.push_back(std::move(state).value());
  }
  CampaignReport report;
  report.timings.resize(table->size());
  for (std::size_t i = 0; i < table->size(); ++i) report.timings[i].pass = table->at(i).name;

  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<std::size_t> pick(0, table->size() - 1);
  const Clock::time_point begin = Clock::now();
  for (unsigned episode = 0; episode < options.episodes; ++episode) {
    if (options.timeLimit.count() > 0 && Clock::now() - begin >= options.timeLimit) break;
    const std::size_t p = episode % programs.size();
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<ModuleState> state, starts[p]->clone());
    ++report.episodes;
    std::vector<std::string> sequence;
    for (unsigned step = 0; step < options.steps; ++step) {
      const std::size_t action = pick(rng);
      sequence.push_back(table->at(action).name);
      const Clock::time_point before = Clock::now();
      Result<PassOutcome> outcome = state->applyPass(action);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - before).count();
      ++report.steps;
      PassTiming& timing = report.timings[action];
      ++timing.runs;
      timing.totalMs += ms;
      timing.maxMs = std::max(timing.maxMs, ms);
      if (outcome.ok()) {
        timing.changed += outcome->changed ? 1 : 0;
        continue;
      }
      if (state->usable() && outcome.status().code() == ErrorCode::kInvalidArgument) {
        ++report.refusals;  // refused before it ran: the state is unchanged
        continue;
      }
      const FailureKind kind = classify(outcome.status());
      (kind == FailureKind::kCrash           ? report.crashes
       : kind == FailureKind::kInvalidModule ? report.invalidModules
                                             : report.otherErrors)++;
      if (report.failures.size() < options.keepFailures) {
        report.failures.push_back({kind, programs[p].name, sequence, outcome.status().message()});
      }
      break;  // the state is unusable: next episode
    }
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return report;
}

}  // namespace kiln::llvm_engine
