// The differential harness of `kiln bench chaos --episodes`: the same seeded
// episodes run twice, on clusters built alike, once quiet and once under a
// fault, asking every compared space at the start and at every step; the two
// records are then compared value by value. A restore that shows in any
// number (a reward measured from the wrong point, an observation of another
// state) or in an episode's outcome (a step lost, an error that the quiet
// run did not have) is a mismatch. Planning and comparing are pure
// functions; runEpisodes() is the mechanism, over a real client.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/status.h>
#include <kiln/value.h>

namespace kiln::bench {

// One episode: a benchmark and the actions to apply, one per step.
struct EpisodePlan {
  std::string benchmark;
  std::vector<std::int64_t> actions;
  bool operator==(const EpisodePlan&) const = default;
};

struct PlanOptions {
  std::uint64_t seed = 1;
  std::size_t episodes = 0;
  std::size_t length = 8;               // actions per episode
  std::vector<std::string> benchmarks;  // taken in turn
  std::int64_t actionCount = 0;         // actions are drawn uniformly from [0, actionCount)
  std::vector<std::int64_t> avoid;      // ... except these (e.g. a planted crasher)
};

// The same options always give the same plans.
std::vector<EpisodePlan> planEpisodes(const PlanOptions& options);

// What one step (or the start, step 0) gave back.
struct StepRecord {
  std::vector<Value> values;  // one per compared space; empty on an error
  bool ended = false;         // the episode ended at this step
  bool restored = false;      // the step's info said the session was restored first
  ErrorCode error = ErrorCode::kOk;
  std::string message;  // the error's, if any
};
using EpisodeRecord = std::vector<StepRecord>;

struct ComparedSpace {
  std::string name;
  bool reward = false;  // counted among reward mismatches, else observation ones
};

// The spaces the harness compares for a session type: every reward and the
// observations that tell states apart cheaply (the IR through its hash, not
// its text); measured spaces (times) are left out.
std::vector<ComparedSpace> defaultComparedSpaces(const std::string& sessionType);

struct Mismatch {
  std::size_t episode = 0, step = 0;
  std::string what;  // a space's name, or "outcome"
  std::string quiet, faulted;
};

struct Comparison {
  std::uint64_t episodes = 0, steps = 0, values = 0;  // compared
  std::uint64_t rewardMismatches = 0, observationMismatches = 0;
  // Episodes whose course differs: another length, an end or an error at
  // another step, an error of another kind (a step lost to the fault).
  std::uint64_t outcomeMismatches = 0;
  std::uint64_t restoredSteps = 0;  // in the faulted run
  std::vector<Mismatch> examples;   // the first few, to reproduce
  bool clean() const {
    return rewardMismatches == 0 && observationMismatches == 0 && outcomeMismatches == 0;
  }
};

Comparison compareRuns(const std::vector<EpisodeRecord>& quiet,
                       const std::vector<EpisodeRecord>& faulted,
                       const std::vector<ComparedSpace>& spaces, std::size_t keepExamples = 5);

struct RunOptions {
  std::string sessionType;
  std::vector<ComparedSpace> spaces;
  std::size_t concurrency = 8;  // sessions stepping at once, one step in flight each
  Duration startRetryFor = std::chrono::seconds(60);  // a start failed by the fault is retried
  // Session parameters set right after each start (e.g. noop.busy_us, so that
  // noop steps take time for faults to land in).
  std::vector<std::pair<std::string, std::string>> parameters;
};

// Runs every plan, `concurrency` at a time, pipelined across sessions.
// Each episode ends after its actions, at the end of the episode, or at the
// first error (recorded, not returned: under faults, errors are data).
Result<std::vector<EpisodeRecord>> runEpisodes(client::Client& client,
                                               const std::vector<EpisodePlan>& plans,
                                               const RunOptions& options);

}  // namespace kiln::bench
