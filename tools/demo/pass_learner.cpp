#include "tools/demo/pass_learner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/base/cpu_time.h"

namespace kiln::demo {
namespace {

using SteadyTime = std::chrono::steady_clock;

constexpr const char* kAutophase = "Autophase";
constexpr const char* kCount = "IrInstructionCount";

double secondsSince(SteadyTime::time_point start) {
  return std::chrono::duration<double>(SteadyTime::now() - start).count();
}

// The learner's input: log(1 + count) of each Autophase feature, then the
// share of the episode already taken (so that the critic knows the horizon).
Status fillFeatures(const Value& autophase, unsigned stepsTaken, unsigned horizon,
                    std::vector<float>& features) {
  const auto* counts = autophase.getIf<Int64Tensor>();
  if (counts == nullptr || counts->values.empty()) {
    return internalError(fmt::format("the llvm session's Autophase is not a list of counts: {}",
                                     autophase.describe()));
  }
  features.clear();
  for (std::int64_t c : counts->values) {
    features.push_back(
        static_cast<float>(std::log1p(static_cast<double>(std::max<std::int64_t>(c, 0)))));
  }
  features.push_back(static_cast<float>(stepsTaken) / static_cast<float>(horizon));
  return okStatus();
}

// An instruction count as the worker sent it (checked: a wrong type is an
// error, not a crash).
Result<std::int64_t> countIn(const Value& value, const char* what) {
  const auto* count = value.getIf<std::int64_t>();
  if (count == nullptr) {
    return internalError(
        fmt::format("the llvm session's {} is not a count: {}", what, value.describe()));
  }
  return *count;
}

}  // namespace

Status validate(const LearnerSettings& s) {
  if (s.envs == 0 || s.horizon == 0 || s.rollout == 0 || s.iterations == 0) {
    return invalidArgument(fmt::format(
        "experiment {}: envs, horizon, rollout and iterations must be at least 1 (got {}, {}, "
        "{}, {})",
        s.name, s.envs, s.horizon, s.rollout, s.iterations));
  }
  if (s.ppo.hidden == 0 || s.ppo.epochs == 0 || s.ppo.minibatch == 0) {
    return invalidArgument(fmt::format(
        "experiment {}: the policy's hidden units, epochs and minibatch must be at least 1",
        s.name));
  }
  if (s.benchmarks.empty()) {
    return invalidArgument(fmt::format("experiment {} has no benchmarks", s.name));
  }
  return okStatus();
}

PassOrderingLearner::PassOrderingLearner(client::Client& client, const LearnerSettings& settings,
                                         LearnerPlace place)
    : client_(client), settings_(settings), place_(std::move(place)) {}

Result<std::unique_ptr<PassOrderingLearner>> PassOrderingLearner::open(
    client::Client& client, const LearnerSettings& settings, LearnerPlace place) {
  KILN_RETURN_IF_ERROR(validate(settings));
  std::unique_ptr<PassOrderingLearner> learner(
      new PassOrderingLearner(client, settings, std::move(place)));
  learner->order_ = settings.benchmarks;
  std::mt19937_64 shuffle(settings.seed);
  std::shuffle(learner->order_.begin(), learner->order_.end(), shuffle);
  learner->envs_.resize(settings.envs);
  for (Env& env : learner->envs_) KILN_RETURN_IF_ERROR(learner->reset(env));
  const client::Session& first = *learner->envs_.front().session;
  KILN_ASSIGN_OR_RETURN(learner->autophase_, first.observationIndex(kAutophase));
  KILN_ASSIGN_OR_RETURN(learner->count_, first.observationIndex(kCount));
  const auto& spaces = first.spaces().actionSpaces;
  if (spaces.empty() || spaces.front().names.empty())
    return internalError("the llvm session offers no passes");
  const auto passes = static_cast<unsigned>(spaces.front().names.size());
  learner->learner_ = std::make_unique<learn::PpoLearner>(
      static_cast<unsigned>(learner->envs_.front().features.size()), passes, settings.ppo,
      settings.seed);
  return learner;
}

Status PassOrderingLearner::reset(Env& env) {
  return startEpisode(env, order_[cursor_++ % order_.size()]);
}

Status PassOrderingLearner::startEpisode(Env& env, const std::string& benchmark) {
  // The old episode's session ends without waiting for the answer.
  env.session.reset();
  client::SessionOptions options{"llvm", benchmark};
  options.actionSpace = "PassesAll";
  options.observations = {kAutophase, kCount, "IrInstructionCountOz"};
  KILN_ASSIGN_OR_RETURN(env.session, place_.endpoint.empty()
                                         ? client_.startSession(options)
                                         : client_.startSessionOn(place_.endpoint, options));
  const auto& initial = env.session->initialObservations();
  if (initial.size() != 3)
    return internalError("the llvm session returned no initial observations");
  KILN_ASSIGN_OR_RETURN(env.count, countIn(initial[1], kCount));
  KILN_ASSIGN_OR_RETURN(env.countOz, countIn(initial[2], "IrInstructionCountOz"));
  env.scale = std::max<double>(1.0, static_cast<double>(env.count - env.countOz));
  env.episodeReturn = 0;
  env.stepsTaken = 0;
  return fillFeatures(initial[0], 0, settings_.horizon, env.features);
}

std::vector<float> PassOrderingLearner::batchFeatures() const {
  std::vector<float> batch;
  for (const Env& env : envs_) batch.insert(batch.end(), env.features.begin(), env.features.end());
  return batch;
}

Status PassOrderingLearner::stepAll(const std::vector<learn::PpoLearner::Decision>& decisions,
                                    IterationRecord& record, double& returnSum) {
  std::vector<std::uint64_t> requests(envs_.size());
  for (std::size_t e = 0; e < envs_.size(); ++e) {
    KILN_ASSIGN_OR_RETURN(requests[e],
                          envs_[e].session->sendStep({Value(std::int64_t{decisions[e].action})},
                                                     {autophase_, count_}));
  }
  for (std::size_t e = 0; e < envs_.size(); ++e) {
    Env& env = envs_[e];
    auto stepped = env.session->awaitStep(requests[e]);
    float reward = 0;
    bool ended = false;
    if (!stepped.ok()) {
      // A pass that breaks the module ends the episode (the worker keeps
      // serving); anything else is the experiment's failure.
      if (stepped.status().code() != ErrorCode::kCompileError) return stepped.status();
      ended = true;
    } else {
      if (stepped->observations.size() != 2) {
        return internalError("the llvm session answered a step without its observations");
      }
      KILN_ASSIGN_OR_RETURN(const std::int64_t count, countIn(stepped->observations[1], kCount));
      reward = static_cast<float>(static_cast<double>(env.count - count) / env.scale);
      env.count = count;
      ++env.stepsTaken;
      ended = stepped->endOfEpisode || env.stepsTaken >= settings_.horizon;
      if (!ended) {
        KILN_RETURN_IF_ERROR(fillFeatures(stepped->observations.at(0), env.stepsTaken,
                                          settings_.horizon, env.features));
      }
    }
    env.episodeReturn += reward;
    rollout_.rewards.push_back(reward);
    rollout_.episodeEnded.push_back(ended ? 1 : 0);
    ++record.steps;
    if (ended) {
      ++record.episodes;
      returnSum += env.episodeReturn;
      KILN_RETURN_IF_ERROR(reset(env));
    }
  }
  return okStatus();
}

Status PassOrderingLearner::run(SteadyTime::time_point t0, LearnerProgress& progress,
                                const std::atomic<bool>& cancelled) {
  const auto rows = static_cast<unsigned>(envs_.size());
  for (unsigned iteration = 0; iteration < settings_.iterations && !cancelled; ++iteration) {
    progress.iteration = iteration + 1;
    progress.phase = Phase::kCollecting;
    IterationRecord record;
    double returnSum = 0;
    auto started = SteadyTime::now();
    rollout_.clear();
    rollout_.envs = rows;
    for (unsigned t = 0; t < settings_.rollout && !cancelled; ++t) {
      std::vector<float> features = batchFeatures();
      auto decisions = learner_->act(features, rows);
      rollout_.features.insert(rollout_.features.end(), features.begin(), features.end());
      for (const auto& d : decisions) {
        rollout_.actions.push_back(d.action);
        rollout_.logProbabilities.push_back(d.logProbability);
        rollout_.values.push_back(d.value);
      }
      KILN_RETURN_IF_ERROR(stepAll(decisions, record, returnSum));
      ++rollout_.steps;
      progress.steps += rows;
    }
    rollout_.lastValues = learner_->values(batchFeatures(), rows);
    record.collectSeconds = secondsSince(started);
    if (record.episodes > 0) record.meanReturn = returnSum / record.episodes;

    progress.phase = Phase::kLull;
    if (firstUpdate_ != nullptr) *firstUpdate_ = true;
    auto updateStarted = SteadyTime::now();
    const double cpuBefore = threadCpuSeconds();
    learner_->update(rollout_);
    record.updateCpuSeconds = threadCpuSeconds() - cpuBefore;
    record.updateSeconds = secondsSince(updateStarted);
    record.endSeconds = secondsSince(t0);
    records_.push_back(record);
  }
  progress.phase = Phase::kDone;
  if (firstUpdate_ != nullptr) *firstUpdate_ = true;
  return okStatus();
}

Result<GreedyEpisode> PassOrderingLearner::greedyEpisode(const std::string& benchmark,
                                                         bool heldOut) {
  Env env;
  KILN_RETURN_IF_ERROR(startEpisode(env, benchmark));
  GreedyEpisode episode;
  episode.benchmark = benchmark;
  episode.heldOut = heldOut;
  episode.initialCount = episode.finalCount = episode.bestCount = env.count;
  episode.countOz = env.countOz;
  std::vector<std::int64_t> actions;
  const auto& names = env.session->spaces().actionSpaces.front().names;  // checked by open()
  for (unsigned t = 0; t < settings_.horizon; ++t) {
    const auto decision = learner_->act(env.features, 1, /*greedy=*/true).front();
    auto stepped = env.session->step({Value(std::int64_t{decision.action})},
                                     std::vector<std::uint32_t>{autophase_, count_});
    if (!stepped.ok()) {
      if (stepped.status().code() == ErrorCode::kCompileError) break;
      return stepped.status();
    }
    episode.passes.push_back(names.at(decision.action));
    actions.push_back(decision.action);
    if (stepped->observations.size() != 2) {
      return internalError("the llvm session answered a step without its observations");
    }
    KILN_ASSIGN_OR_RETURN(episode.finalCount, countIn(stepped->observations[1], kCount));
    if (episode.finalCount < episode.bestCount) {
      episode.bestCount = episode.finalCount;
      episode.bestLength = episode.passes.size();
    }
    if (stepped->endOfEpisode) break;
    KILN_RETURN_IF_ERROR(
        fillFeatures(stepped->observations.at(0), t + 1, settings_.horizon, env.features));
  }
  KILN_RETURN_IF_ERROR(env.session->end());
  actions.resize(episode.bestLength);
  KILN_ASSIGN_OR_RETURN(episode.validation, validateState(benchmark, actions));
  return episode;
}

Result<eval::ValidationVerdict> PassOrderingLearner::validateState(
    const std::string& benchmark, const std::vector<std::int64_t>& actions) {
  client::SessionOptions options{"llvm", benchmark};
  options.actionSpace = "PassesAll";
  KILN_ASSIGN_OR_RETURN(auto session, client_.startSession(options));
  std::vector<Value> steps(actions.begin(), actions.end());
  if (!steps.empty()) {
    KILN_RETURN_IF_ERROR(session->step(steps, std::vector<std::uint32_t>{}).status());
  }
  auto verdict = eval::validateSessionState(*session);
  (void)session->end();
  return verdict;
}

Result<std::vector<GreedyEpisode>> PassOrderingLearner::greedyEpisodes() {
  std::vector<GreedyEpisode> episodes;
  for (bool heldOut : {false, true}) {
    for (const std::string& benchmark : heldOut ? settings_.heldOut : settings_.benchmarks) {
      KILN_ASSIGN_OR_RETURN(GreedyEpisode episode, greedyEpisode(benchmark, heldOut));
      episodes.push_back(std::move(episode));
    }
  }
  return episodes;
}

}  // namespace kiln::demo
