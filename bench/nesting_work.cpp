#include "bench/nesting_work.h"

#include <fmt/format.h>

#include <optional>
#include <random>

#include <kiln/client/datasets.h>

namespace kiln::bench {

const char* workKindName(WorkKind kind) { return kind == WorkKind::kBusy ? "busy" : "llvm"; }

Result<std::vector<std::string>> kilnBenchV0(client::Client& client) {
  if (!client.getSpaces("llvm").ok()) {
    return unimplemented(
        "llvm work needs workers with the llvm session type (a kiln built with LLVM); run "
        "with --work busy");
  }
  KILN_ASSIGN_OR_RETURN(auto uris, client::listBenchmarks(client, "benchmark://kiln-bench-v0"));
  if (uris.empty()) return notFound("the llvm workers list no kiln-bench-v0 benchmark");
  return uris;
}

ExperimentWork::ExperimentWork(client::Client& client, const WorkOptions& options,
                               unsigned experiment, SessionPlace place)
    : client_(client), options_(options), experiment_(experiment), place_(std::move(place)) {}

Result<std::unique_ptr<ExperimentWork>> ExperimentWork::open(
    client::Client& client, const WorkOptions& options, unsigned experiment, unsigned sessions,
    SessionPlace place, const std::vector<SessionPlace>& warmUp) {
  if (options.kind == WorkKind::kLlvm &&
      (options.benchmarks.empty() || options.episodeSteps == 0 || options.passesPerStep == 0)) {
    return invalidArgument("llvm work needs benchmarks, and episodes and steps of at least 1");
  }
  std::unique_ptr<ExperimentWork> work(
      new ExperimentWork(client, options, experiment, std::move(place)));
  if (options.kind == WorkKind::kLlvm) {
    for (const SessionPlace& warm : warmUp) {
      for (const std::string& uri : options.benchmarks) {
        const client::SessionOptions once{"llvm", uri};
        KILN_ASSIGN_OR_RETURN(auto session, work->startOn(warm, once));
        KILN_RETURN_IF_ERROR(session->end());
      }
    }
  }
  work->slots_.resize(sessions);
  for (Slot& slot : work->slots_) KILN_RETURN_IF_ERROR(work->startEpisode(slot));
  return work;
}

Result<std::unique_ptr<client::Session>> ExperimentWork::startOn(
    const SessionPlace& place, const client::SessionOptions& session) {
  return place.endpoint.empty() ? client_.startSession(session)
                                : client_.startSessionOn(place.endpoint, session);
}

Status ExperimentWork::startEpisode(Slot& slot) {
  // Ended without waiting for the answer (the destructor): a trainer does
  // not wait for the old episode's teardown before it starts the next one.
  slot.session.reset();
  slot.episode = episodesStarted_++;
  slot.stepsTaken = 0;
  // The episode's benchmark and actions depend on (experiment, episode)
  // only, so every layout runs the same episodes.
  std::mt19937_64 random((std::uint64_t{experiment_} << 32) ^ slot.episode);
  const bool busy = options_.kind == WorkKind::kBusy;
  client::SessionOptions session{"noop", fmt::format("benchmark://nesting/{}", experiment_)};
  if (!busy) session = {"llvm", options_.benchmarks[random() % options_.benchmarks.size()]};
  KILN_ASSIGN_OR_RETURN(slot.session, startOn(place_, session));
  if (busy) {
    return slot.session->setParameter("noop.busy_us", std::to_string(options_.busyMicros)).status();
  }
  const std::size_t passes = slot.session->spaces().actionSpaces.at(0).names.size();
  if (passes == 0) return internalError("the llvm action space has no pass");
  slot.plan.assign(options_.episodeSteps, {});
  for (auto& step : slot.plan) {
    for (unsigned p = 0; p < options_.passesPerStep; ++p) {
      step.push_back(Value(static_cast<std::int64_t>(random() % passes)));
    }
  }
  return okStatus();
}

const std::vector<Value>& ExperimentWork::nextActions(const Slot& slot) const {
  return options_.kind == WorkKind::kBusy ? busyAction_ : slot.plan[slot.stepsTaken];
}

Status ExperimentWork::collect(unsigned steps, std::chrono::microseconds& actionTime) {
  const std::vector<std::uint32_t> noObservations;
  std::vector<std::optional<std::uint64_t>> pending(slots_.size());
  unsigned issued = 0, done = 0;
  auto issue = [&](std::size_t s) -> Status {
    if (issued >= steps) return okStatus();
    Slot& slot = slots_[s];
    if (options_.kind == WorkKind::kLlvm && slot.stepsTaken == options_.episodeSteps) {
      KILN_RETURN_IF_ERROR(startEpisode(slot));  // part of collecting, so timed
    }
    KILN_ASSIGN_OR_RETURN(pending[s], slot.session->sendStep(nextActions(slot), noObservations));
    ++issued;
    return okStatus();
  };
  for (std::size_t s = 0; s < slots_.size(); ++s) KILN_RETURN_IF_ERROR(issue(s));
  // Bounded: every pass of the loop completes at least one of `steps` steps
  // (or returns the error of one).
  while (done < steps) {
    for (std::size_t s = 0; s < slots_.size() && done < steps; ++s) {
      if (!pending[s]) continue;
      KILN_ASSIGN_OR_RETURN(client::StepResult result, slots_[s].session->awaitStep(*pending[s]));
      pending[s].reset();
      actionTime += result.actionTime;
      ++slots_[s].stepsTaken;
      if (result.endOfEpisode) slots_[s].stepsTaken = options_.episodeSteps;
      ++done;
      KILN_RETURN_IF_ERROR(issue(s));
    }
  }
  return okStatus();
}

}  // namespace kiln::bench
