// The interface a compiler implements to become a kiln session type (public).
// A worker creates one CompilationSession per StartSession, calls init() once,
// then applyAction()/computeObservation()/endOfStep() for every Step, never from
// two threads at once. Sessions of one process share its ServiceContext.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/space.h>
#include <kiln/status.h>
#include <kiln/value.h>

namespace kiln {

// A program to compile: its URI and, when known, its bytes. Bytes are shared
// with the worker's benchmark cache, never copied per session.
struct Benchmark {
  std::string uri;
  std::shared_ptr<const std::string> program;  // null when only the URI is known
  std::size_t sizeBytes() const { return program ? program->size() : 0; }
};

// Whether a lost session can be rebuilt by replaying its benchmark and
// actions in a new session (same observations after the same actions), and
// the observation space whose value proves the rebuilt state is the same.
struct ReplayPolicy {
  bool deterministic = false;
  std::string fingerprint;
};

// What one action did to the session.
struct ActionOutcome {
  bool endOfEpisode = false;
  bool actionHadNoEffect = false;
  std::optional<Space> newActionSpace;
};

// Split-phase actions (see CompilationSession::beginAction): what the worker
// does next, and the fd it polls meanwhile.
enum class ActionProgress {
  kDone,     // the action is applied
  kWaiting,  // poll `ActionWait::fd` for input, then call continueAction()
  kOnPool,   // the rest may block or be heavy: finishAction() on a pool thread
};
struct ActionWait {
  int fd = -1;
  // Steady-clock time (the compiler is a real process) after which
  // continueAction() is called even without input, to report the hang.
  TimePoint deadline{};
};

// Split-phase stepping, for session types whose actions mostly wait on a
// child compiler: the worker then waits in its poll loop instead of parking a
// pool thread, and skips two thread hand-offs per action. A session type
// offers it by also implementing this interface (CompilationSession::
// splitActions). beginAction() and continueAction() run on the loop thread
// and must never block; continueAction() is called when `wait.fd` is
// readable or hung up, or when `wait.deadline` passed. finishAction() runs on
// a pool thread and may block. Any error ends the action as applyAction()'s
// would.
class SplitActions {
 public:
  virtual ~SplitActions() = default;
  virtual Result<ActionProgress> beginAction(const Value& action, ActionOutcome& outcome,
                                             ActionWait& wait) = 0;
  virtual Result<ActionProgress> continueAction(ActionOutcome& outcome, ActionWait& wait) = 0;
  virtual Status finishAction(ActionOutcome& outcome) = 0;
  // Whether computing this observation is quick enough for the loop thread
  // (a split step's observations are computed there when all are quick).
  virtual bool quickObservation(std::size_t spaceIndex) const = 0;
};

class CompilationSession {
 public:
  virtual ~CompilationSession() = default;

  // The spaces of this session type. Called once per process on a probe
  // session that was never initialized; they must not depend on a benchmark.
  virtual std::vector<Space> actionSpaces() const = 0;
  virtual std::vector<Space> observationSpaces() const = 0;
  virtual std::string compilerVersion() const { return "none"; }
  // Declared once per type, like the spaces. The default: not replayable.
  virtual ReplayPolicy replayPolicy() const { return {}; }

  // Starts an episode on `benchmark` with the action space at that index.
  virtual Status init(std::size_t actionSpaceIndex, const Benchmark& benchmark) = 0;

  // Starts as an independent copy of `parent` (same type, same context), which
  // is not stepped while this runs. The default says forking is unsupported.
  virtual Status initAsFork(const CompilationSession& parent) {
    return unimplemented("this session type cannot fork");
  }

  // Applies one action that is already known to lie in the action space.
  virtual Status applyAction(const Value& action, ActionOutcome& outcome) = 0;

  // Computes the observation of `space` (one of observationSpaces()).
  virtual Status computeObservation(std::size_t spaceIndex, Value& observation) = 0;

  // Runs after the actions of a Step and before its observations.
  virtual Status endOfStep(ActionOutcome& outcome) { return okStatus(); }

  // A session parameter (key/value -> reply). Unknown keys: not-found.
  virtual Result<std::string> handleParameter(const std::string& key, const std::string& value) {
    return notFound("unknown session parameter '" + key + "'");
  }

  // The session's split-phase stepping (SplitActions, above), or nullptr:
  // its actions are applied with applyAction() on a pool thread.
  virtual SplitActions* splitActions() { return nullptr; }
  // Called from another thread when a step overran its deadline: stop work
  // that can be stopped (e.g. kill a child compiler). Must be thread-safe.
  virtual void cancel() {}
};

}  // namespace kiln
