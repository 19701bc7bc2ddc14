// What one experiment of `kiln bench nesting` runs in a collection phase:
// a fixed number of steps over its sessions, every session with one step in
// flight. Two kinds of work:
//   busy: noop steps that busy-spin for a calibrated time (the orchestration
//         alone, every step alike);
//   llvm: llvm pass-ordering episodes on kiln-bench-v0, a few random passes
//         per step and a new session (episode) every few steps.
// Episode e of experiment x is drawn from a generator seeded by (x, e) alone,
// so every layout runs the same episodes whichever session takes them.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/status.h>

namespace kiln::bench {

enum class WorkKind { kBusy, kLlvm };

const char* workKindName(WorkKind kind);

struct WorkOptions {
  WorkKind kind = WorkKind::kBusy;
  unsigned busyMicros = 2000;           // busy: compile time of one step
  unsigned passesPerStep = 3;           // llvm: passes applied by one step
  unsigned episodeSteps = 8;            // llvm: steps before the episode ends
  std::vector<std::string> benchmarks;  // llvm: URIs an episode is drawn from
};

// The benchmark URIs of kiln-bench-v0 as the cluster's llvm workers list
// them; unimplemented if no worker hosts the llvm session type.
Result<std::vector<std::string>> kilnBenchV0(client::Client& client);

// Where an experiment's sessions start: on one worker (its dedicated slots),
// or wherever the coordinator places them (a shared pool, or the
// experiment's underlying worker when the client acts for an experiment).
struct SessionPlace {
  std::string endpoint;  // empty = placed by the coordinator
};

class ExperimentWork {
 public:
  // Starts `sessions` sessions (not timed) for experiment `experiment`;
  // for llvm work, first one session per benchmark on each of `warmUp`, so
  // that no layout pays for parsing a benchmark the first time in a phase.
  static Result<std::unique_ptr<ExperimentWork>> open(client::Client& client,
                                                      const WorkOptions& options,
                                                      unsigned experiment, unsigned sessions,
                                                      SessionPlace place,
                                                      const std::vector<SessionPlace>& warmUp);
  // Runs `steps` steps, every session with one step in flight; the
  // worker's time in the actions is added to `actionTime`.
  Status collect(unsigned steps, std::chrono::microseconds& actionTime);

 private:
  struct Slot {
    std::unique_ptr<client::Session> session;
    std::uint64_t episode = 0;
    unsigned stepsTaken = 0;
    std::vector<std::vector<Value>> plan;  // llvm: the episode's actions, step by step
  };
  ExperimentWork(client::Client& client, const WorkOptions& options, unsigned experiment,
                 SessionPlace place);
  Result<std::unique_ptr<client::Session>> startOn(const SessionPlace& place,
                                                   const client::SessionOptions& session);
  // Ends `slot`'s episode (if any) and starts the next of this experiment.
  Status startEpisode(Slot& slot);
  const std::vector<Value>& nextActions(const Slot& slot) const;

  client::Client& client_;
  const WorkOptions& options_;
  unsigned experiment_;
  SessionPlace place_;
  std::vector<Slot> slots_;
  std::uint64_t episodesStarted_ = 0;
  std::vector<Value> busyAction_{Value(std::int64_t{1})};
};

}  // namespace kiln::bench
