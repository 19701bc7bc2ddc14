// The session side of `kiln bench soak`: N slots, each holding at most one
// session, driven in rounds from one thread. Every round gives each slot one
// random operation: an empty slot starts a session (type drawn from the mix,
// on a plain worker or on the nesting host's experiment); a live one steps
// (pipelined: all steps of a round are in flight together), forks into a free
// slot, or ends. Sessions are of replayable types, so a step may never be
// lost: a worker killed under it is the client library's to hide (restore by
// replay). Each slot keeps its own record of the actions answered, and every
// session that ends with a known state has that state checked against it
// (soak_checks.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "bench/soak_checks.h"

namespace kiln::bench {

// Small kiln-bench-v0 programs: quick to start, step and replay.
extern const std::vector<std::string> kSmallPrograms;

// The i-th benchmark a chaos session of `sessionType` works on: noop's own
// `benchmark://chaos/<i>`, the small programs in turn for the others.
std::string chaosBenchmark(const std::string& sessionType, std::size_t i);

// How many actions a session's first action space offers (noop: the 8 that
// add themselves to its Sum).
std::int64_t actionCountOf(const client::Session& session);

struct SessionWeight {
  std::string type;  // "llvm", "noop", "mlgo-inline"
  unsigned weight = 1;
};

// Steps are counted one request each (the observation-only step that reads
// an ending session's state included): stepsAttempted = stepsCompleted +
// compileErrors + restoreCompileErrors + stepsLost.
struct SoakCounters {
  std::uint64_t stepsAttempted = 0, stepsCompleted = 0;
  // Step requests that got no answer, or an error other than a compile
  // error, or whose session could not be restored: each request counts.
  std::uint64_t stepsLost = 0;
  std::uint64_t started = 0, startsFailed = 0, forked = 0, forksFailed = 0;
  std::uint64_t ended = 0, endsFailed = 0, episodesFinished = 0;
  // Steps answered with a compile error of their own (an llvm pass that
  // breaks or crashes on this module): a typed answer that ends the
  // episode, not a loss.
  std::uint64_t compileErrors = 0;
  // Steps whose session had to be restored and whose replay of steps that
  // had all succeeded before got a compile error (Session::endedInRestore):
  // the episode is over, and the replay did not reproduce its history.
  std::uint64_t restoreCompileErrors = 0;
  // Forks answered with a compile error (their parent's restore hit one):
  // the parent's episode is over (it is ended).
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
  // `plain` places on plain workers, `nested` (optional) on the experiment;
  // replays that check ended states start on the plain worker at
  // `replayEndpoint()`.
  SessionSlots(client::Client& plain, client::Client* nested, SlotPlan plan, std::uint64_t seed,
               std::function<std::string()> replayEndpoint);
  ~SessionSlots();

  void round();
  // Ends every session, checking its state, and collects the last checks.
  void endAll();
  std::size_t live() const;
  const SoakCounters& counters() const { return counters_; }
  const StateChecks& checks() const { return checks_; }
  // Each kind of failure with its count and first message, for the report.
  std::vector<std::string> failures() const;

 private:
  struct Slot {
    std::unique_ptr<client::Session> session;
    client::SessionOptions options;        // type and benchmark, for the replay that checks it
    std::int64_t actionCount = 0;          // size of the action space
    std::vector<std::int64_t> applied;     // actions of the steps answered, in order
    std::optional<std::uint64_t> pending;  // step in flight
    std::int64_t pendingAction = 0;
    const std::string& type() const { return options.sessionType; }
  };
  // Why a session ends: what is known of its state.
  enum class Ending {
    kCheckState,   // as the bench chose (or its episode finished): its state is checked
    kEpisodeOver,  // a compile error ended it on its worker: no state is left
    kStateUnknown  // a step was lost: whether it was applied is unknown
  };
  // A step request answered with an error: counted as what it is.
  void countUnanswered(const Slot& slot, const Status& status);
  client::Client& clientFor(std::size_t slot);
  void start(std::size_t slot);
  void fork(std::size_t slot);
  void end(std::size_t slot, Ending ending = Ending::kCheckState);
  // Reads a session's state (one observation-only step) and has it checked.
  void checkState(Slot& slot);
  void fail(const std::string& what, const Status& status);

  client::Client& plain_;
  client::Client* nested_;
  SlotPlan plan_;
  std::mt19937_64 random_;
  std::discrete_distribution<std::size_t> pickType_;
  std::vector<Slot> slots_;
  SoakCounters counters_;
  StateChecks checks_;
  struct Failure {
    std::string kind;
    std::string first;
    std::uint64_t count = 0;
  };
  std::vector<Failure> failures_;
};

}  // namespace kiln::bench
