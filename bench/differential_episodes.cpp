#include "bench/differential_episodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <thread>

namespace kiln::bench {

std::vector<EpisodePlan> planEpisodes(const PlanOptions& options) {
  std::vector<EpisodePlan> plans;
  if (options.benchmarks.empty() || options.actionCount <= 0) return plans;
  std::vector<std::int64_t> allowed;
  for (std::int64_t action = 0; action < options.actionCount; ++action) {
    if (std::find(options.avoid.begin(), options.avoid.end(), action) == options.avoid.end()) {
      allowed.push_back(action);
    }
  }
  if (allowed.empty()) return plans;
  // One generator per plan, seeded from the plan's number: a plan does not
  // change when the count of episodes does.
  plans.reserve(options.episodes);
  for (std::size_t e = 0; e < options.episodes; ++e) {
    std::mt19937_64 random(options.seed * 0x9E3779B97F4A7C15ull + e);
    std::uniform_int_distribution<std::size_t> pick(0, allowed.size() - 1);
    EpisodePlan plan{options.benchmarks[e % options.benchmarks.size()], {}};
    plan.actions.reserve(options.length);
    for (std::size_t s = 0; s < options.length; ++s) plan.actions.push_back(allowed[pick(random)]);
    plans.push_back(std::move(plan));
  }
  return plans;
}

std::vector<ComparedSpace> defaultComparedSpaces(const std::string& sessionType) {
  if (sessionType == "noop") {
    return {{"Sum"}, {"Steps"}, {"Tensor"}, {"Reward:Sum", true}};
  }
  if (sessionType == "llvm") {
    return {{"IrInstructionCount"},
            {"IrSha1"},
            {"InstCount"},
            {"Autophase"},
            {"ObjectTextSizeBytes"},
            {"Reward:IrInstructionCount", true},
            {"Reward:IrInstructionCountOz", true},
            {"Reward:ObjectTextSizeBytes", true},
            {"Reward:ObjectTextSizeOz", true}};
  }
  if (sessionType.starts_with("mlgo-")) {
    return {{"Features"},
            {"DefaultAdvice"},
            {"Decisions"},
            {"NativeSize"},
            {"Reward:NativeSizeSaved", true}};
  }
  return {};
}

namespace {

void noteMismatch(Comparison& out, std::size_t keep, std::size_t episode, std::size_t step,
                  std::string what, std::string quiet, std::string faulted) {
  if (out.examples.size() >= keep) return;
  out.examples.push_back({episode, step, std::move(what), std::move(quiet), std::move(faulted)});
}

std::string describeOutcome(const EpisodeRecord& record, std::size_t step) {
  if (step >= record.size())
    return fmt::format("no step {} (the episode had {})", step, record.size());
  const StepRecord& s = record[step];
  if (s.error != ErrorCode::kOk) return fmt::format("error: {}", s.message);
  return s.ended ? "ended" : "stepped";
}

}  // namespace

Comparison compareRuns(const std::vector<EpisodeRecord>& quiet,
                       const std::vector<EpisodeRecord>& faulted,
                       const std::vector<ComparedSpace>& spaces, std::size_t keepExamples) {
  Comparison out;
  const std::size_t episodes = std::min(quiet.size(), faulted.size());
  out.outcomeMismatches = std::max(quiet.size(), faulted.size()) - episodes;
  for (std::size_t e = 0; e < episodes; ++e) {
    const EpisodeRecord& q = quiet[e];
    const EpisodeRecord& f = faulted[e];
    ++out.episodes;
    bool outcomeDiffers = q.size() != f.size();
    std::size_t firstDifference = std::min(q.size(), f.size());
    for (std::size_t s = 0; s < std::min(q.size(), f.size()); ++s) {
      out.restoredSteps += f[s].restored ? 1 : 0;
      if (q[s].error != f[s].error || q[s].ended != f[s].ended) {
        outcomeDiffers = true;
        firstDifference = s;
        break;
      }
      ++out.steps;
      if (q[s].values.size() != spaces.size() || f[s].values.size() != spaces.size()) continue;
      for (std::size_t v = 0; v < spaces.size(); ++v) {
        ++out.values;
        if (q[s].values[v] == f[s].values[v]) continue;
        (spaces[v].reward ? out.rewardMismatches : out.observationMismatches) += 1;
        noteMismatch(out, keepExamples, e, s, spaces[v].name, q[s].values[v].describe(),
                     f[s].values[v].describe());
      }
    }
    if (outcomeDiffers) {
      ++out.outcomeMismatches;
      noteMismatch(out, keepExamples, e, firstDifference, "outcome",
                   describeOutcome(q, firstDifference), describeOutcome(f, firstDifference));
    }
  }
  return out;
}

namespace {

// One episode being run.
struct Slot {
  std::size_t plan = 0;
  std::unique_ptr<client::Session> session;
  std::size_t next = 0;  // the next action of the plan
  std::optional<std::uint64_t> inFlight;
  EpisodeRecord record;
};

StepRecord failedStep(const Status& status) {
  StepRecord step;
  step.error = status.code();
  step.message = status.toString();
  return step;
}

bool isTransient(const Status& status) {
  const ErrorCode code = status.code();
  return code == ErrorCode::kDisconnected || code == ErrorCode::kTimeout ||
         code == ErrorCode::kOverloaded || code == ErrorCode::kNotFound;
}

// Starts the plan's session, asking for the compared spaces as its first
// observations (step 0 of the record). A start that the fault made fail
// (its worker died, no worker ready yet) is tried again, as a user's reset
// would be; anything else is the record's outcome.
void startEpisode(client::Client& client, const EpisodePlan& plan, const RunOptions& options,
                  Slot& slot) {
  client::SessionOptions start{options.sessionType, plan.benchmark};
  for (const ComparedSpace& space : options.spaces) start.observations.push_back(space.name);
  const auto giveUp = std::chrono::steady_clock::now() + options.startRetryFor;
  for (;;) {
    auto session = client.startSession(start);
    for (const auto& [key, value] : options.parameters) {
      if (!session.ok()) break;
      if (auto set = (*session)->setParameter(key, value); !set.ok()) session = set.status();
    }
    if (session.ok()) {
      StepRecord first;
      first.values = (*session)->initialObservations();
      slot.record.push_back(std::move(first));
      slot.session = std::move(session).value();
      return;
    }
    if (!isTransient(session.status()) || std::chrono::steady_clock::now() > giveUp) {
      slot.record.push_back(failedStep(session.status()));
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

Result<std::vector<EpisodeRecord>> runEpisodes(client::Client& client,
                                               const std::vector<EpisodePlan>& plans,
                                               const RunOptions& options) {
  if (options.concurrency == 0) return invalidArgument("the harness needs at least one session");
  std::vector<EpisodeRecord> records(plans.size());
  std::optional<std::vector<std::uint32_t>> indices;
  std::size_t nextPlan = 0;
  std::vector<Slot> running;
  auto finish = [&](Slot& slot) {
    slot.session.reset();  // ends it without waiting
    records[slot.plan] = std::move(slot.record);
  };
  while (nextPlan < plans.size() || !running.empty()) {
    while (running.size() < options.concurrency && nextPlan < plans.size()) {
      Slot slot;
      slot.plan = nextPlan++;
      startEpisode(client, plans[slot.plan], options, slot);
      if (!slot.session) {
        finish(slot);
        continue;
      }
      if (!indices) {
        indices.emplace();
        for (const ComparedSpace& space : options.spaces) {
          KILN_ASSIGN_OR_RETURN(std::uint32_t index, slot.session->observationIndex(space.name));
          indices->push_back(index);
        }
      }
      running.push_back(std::move(slot));
    }
    for (Slot& slot : running) {
      const std::vector<std::int64_t>& actions = plans[slot.plan].actions;
      if (slot.next >= actions.size()) continue;
      auto sent = slot.session->sendStep({Value(actions[slot.next])}, *indices);
      if (sent.ok()) {
        slot.inFlight = *sent;
      } else {
        slot.record.push_back(failedStep(sent.status()));
      }
      ++slot.next;
    }
    for (Slot& slot : running) {
      if (!slot.inFlight) continue;
      auto stepped = slot.session->awaitStep(*slot.inFlight);
      slot.inFlight.reset();
      if (!stepped.ok()) {
        slot.record.push_back(failedStep(stepped.status()));
        continue;
      }
      StepRecord step;
      step.values = std::move(stepped->observations);
      step.ended = stepped->endOfEpisode;
      step.restored = stepped->restored;
      slot.record.push_back(std::move(step));
    }
    std::vector<Slot> going;
    for (Slot& slot : running) {
      const StepRecord& last = slot.record.back();
      if (last.error != ErrorCode::kOk || last.ended ||
          slot.next >= plans[slot.plan].actions.size()) {
        finish(slot);
      } else {
        going.push_back(std::move(slot));
      }
    }
    running = std::move(going);
  }
  return records;
}

}  // namespace kiln::bench
