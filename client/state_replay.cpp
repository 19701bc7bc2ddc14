#include <kiln/client/state_replay.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>

namespace kiln::client {
namespace {

// Errors that say the cluster could not be asked, as opposed to a state
// that cannot be replayed.
bool clusterUnreachable(const Status& status) {
  return status.code() == ErrorCode::kDisconnected || status.code() == ErrorCode::kTimeout ||
         status.code() == ErrorCode::kOverloaded || status.code() == ErrorCode::kPermissionDenied ||
         status.code() == ErrorCode::kInternal;
}

ReplayResult failed(std::string problem) {
  ReplayResult result;
  result.problem = std::move(problem);
  return result;
}

}  // namespace

ReplayResult judgeReplay(const EnvState& state, std::optional<double> replayedReward,
                         const ReplayOptions& options) {
  ReplayResult result;
  result.reward = replayedReward;
  if (!state.reward) {
    result.reproduced = true;  // nothing recorded to compare
    return result;
  }
  if (!replayedReward) {
    result.problem = "the replay gave no reward to compare with the recorded one";
    return result;
  }
  const double difference = std::fabs(*replayedReward - *state.reward);
  result.reproduced = difference < options.tolerance;
  if (!result.reproduced) {
    result.problem = fmt::format("reward {} replayed, {} recorded (differs by {:.3g})",
                                 *replayedReward, *state.reward, difference);
  }
  return result;
}

std::optional<std::int64_t> impliedInstructionCount(const std::string& rewardSpace, double reward,
                                                    std::int64_t o0, std::int64_t oz) {
  double drop = 0;
  if (rewardSpace == "IrInstructionCount") {
    drop = reward;
  } else if (rewardSpace == "IrInstructionCountOz") {
    drop = reward * static_cast<double>(std::max<std::int64_t>(o0 - oz, 1));
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(drop)) return std::nullopt;
  return o0 - static_cast<std::int64_t>(std::llround(drop));
}

namespace {

// The actions of `names` in the first action space that holds them all (the
// llvm type's PassesAll, else PassesAndPipelines for a state with a
// pipeline), and that space; else the first space's error.
Result<std::pair<const Space*, std::vector<Value>>> actionsIn(
    const std::vector<Space>& spaces, const std::vector<std::string>& names) {
  std::optional<Status> firstError;
  for (const Space& space : spaces) {
    std::vector<Value> actions;
    actions.reserve(names.size());
    for (const std::string& name : names) {
      Result<std::int64_t> index = findAction(space, name);
      if (!index.ok()) {
        if (!firstError) firstError = index.status();
        break;
      }
      actions.emplace_back(*index);
    }
    if (actions.size() == names.size()) return std::make_pair(&space, std::move(actions));
  }
  return *firstError;
}

}  // namespace

Result<ReplayResult> replayState(Client& client, const EnvState& state,
                                 const ReplayOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(SessionTypeSpaces spaces, client.getSpaces(options.sessionType));
  if (spaces.actionSpaces.empty()) {
    return failed(fmt::format("session type '{}' has no action space", options.sessionType));
  }
  auto found = actionsIn(spaces.actionSpaces, state.actions);
  if (!found.ok()) return failed(found.status().message());
  const std::vector<Value>& actions = found->second;
  SessionOptions session;
  session.sessionType = options.sessionType;
  session.benchmark = state.benchmark;
  session.actionSpace = found->first->name;
  auto started = client.startSession(session);
  if (!started.ok()) {
    if (clusterUnreachable(started.status())) return started.status();
    return failed("cannot start on the benchmark: " + started.status().message());
  }
  Session& s = **started;
  const std::vector<std::string> observed = {"Reward:" + options.rewardSpace, "IrInstructionCount",
                                             "IrInstructionCountO0", "IrInstructionCountOz"};
  auto stepped = s.step(actions, observed);
  std::optional<std::string> validation;
  std::string validationProblem;
  if (options.validate && stepped.ok()) {
    auto asan = s.setParameter("llvm.validate_asan", options.asan ? "1" : "0");
    auto validated = asan.ok() ? s.step({}, std::vector<std::string>{"Validation"})
                               : Result<StepResult>(asan.status());
    if (validated.ok() && validated->observations.size() == 1 &&
        validated->observations[0].is<std::string>()) {
      validation = validated->observations[0].as<std::string>();
    } else {
      validationProblem = validated.ok() ? "the worker's Validation has an unexpected type"
                                         : validated.status().message();
    }
  }
  (void)s.end();
  if (!stepped.ok()) {
    if (clusterUnreachable(stepped.status())) return stepped.status();
    return failed("the actions did not replay: " + stepped.status().message());
  }
  if (stepped->actionsApplied != actions.size()) {
    return failed(fmt::format("the episode ended after {} of {} actions", stepped->actionsApplied,
                              actions.size()));
  }
  const std::vector<Value>& values = stepped->observations;
  if (values.size() != observed.size() || !values[0].is<double>() ||
      !values[1].is<std::int64_t>() || !values[2].is<std::int64_t>() ||
      !values[3].is<std::int64_t>()) {
    return failed("the worker's observations have unexpected types");
  }
  ReplayResult result = judgeReplay(state, values[0].as<double>(), options);
  result.instructions = values[1].as<std::int64_t>();
  if (state.reward) {
    result.recordedInstructions =
        impliedInstructionCount(options.rewardSpace, *state.reward, values[2].as<std::int64_t>(),
                                values[3].as<std::int64_t>());
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  result.validation = std::move(validation);
  result.validationProblem = std::move(validationProblem);
  return result;
}

}  // namespace kiln::client
