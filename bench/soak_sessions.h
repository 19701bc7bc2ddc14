// The session side of `kiln bench soak`: N slots, each holding at most one
// session, driven in rounds from one thread. Every round gives each slot one
// random operation: an empty slot starts a session (type drawn from the mix,
// on a plain worker or on the nesting host's experiment); a live one steps
// (pipelined: all steps of a round are in flight together), forks into a free
// slot, or ends. Sessions are of replayable types, so a step may never fail:
// a worker killed under it is the client library's to hide (restore by
// replay). Noop sessions also check their final sum against what was sent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "client/client.h"

namespace kiln::bench {

struct SessionWeight {
  std::string type;  // "llvm", "noop", "mlgo-inline"
  unsigned weight = 1;
};

struct SoakCounters {
  std::uint64_t stepsAttempted = 0, stepsCompleted = 0, stepsLost = 0;
  std::uint64_t started = 0, startsFailed = 0, forked = 0, forksFailed = 0;
  std::uint64_t ended = 0, endsFailed = 0, episodesFinished = 0, mismatched = 0;
  // Steps answered with a compile error (an llvm pass that breaks or
  // crashes on this module, on the step itself or when the client replays
  // the session's history to restore it): a typed answer that ends the
  // episode, not a loss. stepsAttempted = completed + compileErrors + lost.
  std::uint64_t compileErrors = 0;
  // Forks whose parent had to be restored and whose replay hit a compile
  // error: the parent's episode is over (it is ended); not a failure.
  std::uint64_t forksRefused = 0;
};

struct SlotPlan {
  unsigned slots = 200;
  std::vector<SessionWeight> mix;
  std::vector<std::string> benchmarks;  // URIs for every type
  unsigned nestedShare = 4;             // every n-th slot uses the experiment's client (0: none)
  unsigned maxStepsPerSession = 100;    // bounds the history a replay must send
  double forkChance = 0.04, endChance = 0.03;
};

class SessionSlots {
 public:
  // `plain` places on plain workers, `nested` (optional) on the experiment.
  SessionSlots(client::Client& plain, client::Client* nested, SlotPlan plan, std::uint64_t seed);
  ~SessionSlots();

  void round();
  // Checks every noop session's sum, then ends every session.
  void endAll();
  std::size_t live() const;
  const SoakCounters& counters() const { return counters_; }
  // Each kind of failure with its count and first message, for the report.
  std::vector<std::string> failures() const;

 private:
  struct Slot {
    std::unique_ptr<client::Session> session;
    std::string type;
    std::int64_t actions = 0;  // size of the action space
    std::int64_t noopSum = 0;  // what a noop session's Sum must be
    unsigned steps = 0;
    std::optional<std::uint64_t> pending;  // step in flight
    std::int64_t pendingAction = 0;
  };
  client::Client& clientFor(std::size_t slot);
  void start(std::size_t slot);
  void fork(std::size_t slot);
  void end(std::size_t slot, bool overAlready = false);
  void fail(const std::string& what, const Status& status);

  client::Client& plain_;
  client::Client* nested_;
  SlotPlan plan_;
  std::mt19937_64 random_;
  std::discrete_distribution<std::size_t> pickType_;
  std::vector<Slot> slots_;
  SoakCounters counters_;
  struct Failure {
    std::string kind;
    std::string first;
    std::uint64_t count = 0;
  };
  std::vector<Failure> failures_;
};

}  // namespace kiln::bench
