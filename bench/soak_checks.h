// The state checks of `kiln bench soak`: whatever kills and restores a
// session went through, its state when it ends must be the one that the
// steps the bench saw answered lead to. A noop session's Sum must be the sum
// of those actions. An llvm module's fingerprint (IrSha1) and an mlgo-inline
// session's decisions count, pending features and native size must equal
// those of a replay: a fresh session, started from the same benchmark on a
// worker that is never killed, given the same actions one step request each
// (pipelined), as the client library replays a history to restore a session.
// Replays are sent when a session ends and collected once per round, so they
// run beside the round's steps.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <kiln/client/client.h>

namespace kiln::bench {

// How a session type's state is judged at its end.
struct StateCheckKind {
  std::vector<std::string> observations;  // read from the session before it ends
  std::string mismatchField;              // the report's count of wrong states
  bool replayed = false;                  // judged against a replay (else against the sum)
};

// The kinds for "noop", "llvm" and "mlgo-inline" (every type the soak mixes).
const std::map<std::string, StateCheckKind>& stateCheckKinds();

// An ended session as the bench saw it.
struct EndedState {
  client::SessionOptions options;  // its type and benchmark
  std::vector<std::int64_t>
      actions;                  // of every step answered, in order (a fork's with its parent's)
  std::vector<Value> observed;  // its StateCheckKind::observations, read before it ended
};

struct StateCheckCounts {
  std::uint64_t checked = 0, mismatched = 0;
};

class StateChecks {
 public:
  // Replays start on the plain worker at `replayEndpoint()` (placed by the
  // coordinator if that worker is gone at the time).
  StateChecks(client::Client& client, std::function<std::string()> replayEndpoint);
  ~StateChecks();

  // Judges a noop sum at once; sends a replay for the others.
  void check(EndedState ended);
  // Awaits every replay sent, compares, and ends the replayed sessions.
  void collect();

  const std::map<std::string, StateCheckCounts>& counts() const { return counts_; }
  // Checks that could not run (a replay that could not be started or answered).
  std::uint64_t failed() const { return failed_; }
  // Each kind of mismatch or failure with its count and first message.
  std::vector<std::string> problems() const;

 private:
  struct Replay {
    EndedState ended;
    std::unique_ptr<client::Session> session;
    std::vector<std::uint64_t> requests;  // the last one reads the state
  };
  Result<std::unique_ptr<client::Session>> startReplay(const client::SessionOptions& options);
  void judge(const EndedState& ended, const std::vector<Value>& truth, const std::string& how);
  void note(const std::string& kind, const std::string& message);

  client::Client& client_;
  std::function<std::string()> replayEndpoint_;
  std::vector<Replay> replays_;
  std::map<std::string, StateCheckCounts> counts_;
  std::uint64_t failed_ = 0;
  struct Problem {
    std::string kind, first;
    std::uint64_t count = 0;
  };
  std::vector<Problem> problems_;
};

}  // namespace kiln::bench
