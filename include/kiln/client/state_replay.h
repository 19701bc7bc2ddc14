// Replaying a written-down state (env_state.h) on a cluster and judging
// whether it reproduces: start a session on the state's benchmark, apply its
// actions in one step, observe the reward (one observation after every
// action is the episode's cumulative reward) and the instruction count, and
// compare with what was recorded. replayState is the mechanism (one
// session); judgeReplay and impliedInstructionCount are the policy, pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <kiln/client/client.h>
#include <kiln/client/env_state.h>

namespace kiln::client {

struct ReplayOptions {
  std::string sessionType = "llvm";
  // The reward the states recorded (llvm-ic-v0's): "Reward:" + this is observed.
  std::string rewardSpace = "IrInstructionCountOz";
  double tolerance = 1e-5;  // |replayed - recorded| below this reproduces (CompilerGym's)
  // Also validate the state reached (the llvm type's Validation observation:
  // its program run against the benchmark as it came), with ASan too.
  bool validate = false;
  bool asan = false;
};

struct ReplayResult {
  bool reproduced = false;
  std::string problem;                       // why not, when it did not
  std::optional<double> reward;              // replayed
  std::optional<std::int64_t> instructions;  // IrInstructionCount after the actions
  // The count the recorded reward implies (instruction-count rewards only).
  std::optional<std::int64_t> recordedInstructions;
  double seconds = 0;  // the replay's wall time
  // With ReplayOptions::validate: the Validation observation (JSON), or
  // why it could not be had.
  std::optional<std::string> validation;
  std::string validationProblem;
};

// The verdict on a replay that ran: reproduced when the state recorded no
// reward (nothing to compare) or the rewards agree within the tolerance.
ReplayResult judgeReplay(const EnvState& state, std::optional<double> replayedReward,
                         const ReplayOptions& options);

// The final IrInstructionCount a cumulative reward of `rewardSpace` implies
// from the benchmark's O0 and Oz counts (rewards.h): O0 - reward for
// IrInstructionCount, O0 - reward * max(O0 - Oz, 1) for
// IrInstructionCountOz; nullopt for other spaces.
std::optional<std::int64_t> impliedInstructionCount(const std::string& rewardSpace, double reward,
                                                    std::int64_t o0, std::int64_t oz);

// Replays `state` on a new session of `client` and judges it. A state that
// cannot run (unknown benchmark, unknown action, a compile error) comes back
// as a result with reproduced = false and the problem named; an error is
// returned only when the cluster could not be asked at all.
Result<ReplayResult> replayState(Client& client, const EnvState& state,
                                 const ReplayOptions& options);

}  // namespace kiln::client
