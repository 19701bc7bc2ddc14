// A real learning experiment for kiln's main job: PPO (tools/learn/ppo.h) learns
// LLVM pass ordering through kiln sessions, as CompilerGym's
// llvm-autophase-ic-v0: `envs` llvm sessions step together (one pass each
// per step, every step in flight at once), the observation is the
// log-scaled Autophase vector plus the episode's progress, the reward the
// drop of the IR instruction count as a fraction of what -Oz achieves (an
// episode's return of 1.0 matches -Oz). Each iteration collects `rollout`
// steps per env, then trains: the update is the experiment's training lull.
// One seed fixes every decision, so the learning curve per iteration is the
// same wherever the sessions run; only its wall time differs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "tools/demo/timeline.h"
#include "tools/eval/validation_verdict.h"
#include "tools/learn/ppo.h"

namespace kiln::demo {

struct LearnerSettings {
  std::string name;
  learn::PpoConfig ppo;
  unsigned envs = 4;
  unsigned horizon = 10;  // passes per episode
  unsigned rollout = 20;  // steps per env per iteration
  unsigned iterations = 12;
  std::uint64_t seed = 1;
  std::vector<std::string> benchmarks;  // episodes cycle through them
  // Evaluated after training beside `benchmarks`, never trained on.
  std::vector<std::string> heldOut;
};

// Checks what a user can get wrong in the settings (counts of 0, no benchmarks).
Status validate(const LearnerSettings& settings);

struct IterationRecord {
  double endSeconds = 0;  // since the layout's start
  double collectSeconds = 0;
  double updateSeconds = 0;
  double updateCpuSeconds = 0;  // the learner thread's CPU in the update
  std::uint64_t steps = 0;      // env steps in the iteration
  unsigned episodes = 0;        // episodes that ended in it
  double meanReturn = 0;        // their mean return (fraction of -Oz's reduction)
};

// What a running experiment shows to the progress display.
struct LearnerProgress {
  std::atomic<Phase> phase{Phase::kStarting};
  std::atomic<unsigned> iteration{0};
  std::atomic<std::uint64_t> steps{0};
};

// Where an experiment's sessions start: a worker's endpoint (its dedicated
// slots), or empty for wherever the coordinator places them.
struct LearnerPlace {
  std::string endpoint;
};

// One greedy episode of a trained policy on one benchmark, and the best
// state it passed through: as CompilerGym's leaderboard took an episode's
// result, so that a policy never reports worse than where it started (a
// policy that ends past its best is seen in finalCount).
struct GreedyEpisode {
  std::string benchmark;
  bool heldOut = false;             // not one of the benchmarks the policy trained on
  std::vector<std::string> passes;  // the whole episode
  std::size_t bestLength = 0;       // passes[0, bestLength) reach the best state
  std::int64_t initialCount = 0, finalCount = 0, bestCount = 0, countOz = 0;  // IR instructions
  eval::ValidationVerdict validation;  // of the best state, run against -O0
};

class PassOrderingLearner {
 public:
  // Starts the envs' first sessions (not timed: call before the clock).
  static Result<std::unique_ptr<PassOrderingLearner>> open(client::Client& client,
                                                           const LearnerSettings& settings,
                                                           LearnerPlace place);
  // Runs every iteration; `t0` is the layout's start for the records.
  Status run(std::chrono::steady_clock::time_point t0, LearnerProgress& progress,
             const std::atomic<bool>& cancelled);
  const std::vector<IterationRecord>& records() const { return records_; }
  // The trained policy's most likely passes, one episode per benchmark.
  // One greedy episode on each training benchmark, then on each held-out
  // one, each best state validated in a fresh session.
  Result<std::vector<GreedyEpisode>> greedyEpisodes();
  // Sets `start` once the first update begins (the other experiment's cue).
  void notifyFirstUpdate(std::atomic<bool>* start) { firstUpdate_ = start; }

 private:
  struct Env {
    std::unique_ptr<client::Session> session;
    std::vector<float> features;
    std::int64_t count = 0;    // IR instructions now
    std::int64_t countOz = 0;  // after -Oz
    double scale = 1;          // initial count - -Oz count (at least 1)
    double episodeReturn = 0;
    unsigned stepsTaken = 0;
  };
  PassOrderingLearner(client::Client& client, const LearnerSettings& settings, LearnerPlace place);
  // Starts `env`'s next episode: on the next benchmark, or on `benchmark`.
  Status reset(Env& env);
  Status startEpisode(Env& env, const std::string& benchmark);
  Result<GreedyEpisode> greedyEpisode(const std::string& benchmark, bool heldOut);
  // The state `actions` reach on `benchmark`, judged by running it against -O0.
  Result<eval::ValidationVerdict> validateState(const std::string& benchmark,
                                                const std::vector<std::int64_t>& actions);
  // One step of every env; appends the rollout row's rewards and ends.
  Status stepAll(const std::vector<learn::PpoLearner::Decision>& decisions, IterationRecord& record,
                 double& returnSum);
  std::vector<float> batchFeatures() const;

  client::Client& client_;
  const LearnerSettings& settings_;
  LearnerPlace place_;
  std::vector<Env> envs_;
  std::vector<std::string> order_;  // the benchmarks, shuffled by the seed
  std::size_t cursor_ = 0;
  std::uint32_t autophase_ = 0, count_ = 0;  // observation indices
  std::unique_ptr<learn::PpoLearner> learner_;
  learn::Rollout rollout_;
  std::vector<IterationRecord> records_;
  std::atomic<bool>* firstUpdate_ = nullptr;
};

}  // namespace kiln::demo
