// `kiln nest --isolate`: a nesting host whose experiments each run in a child
// process (nesting/isolated_child.h), so that a compile step that crashes or
// hangs takes down only its own experiment's sessions on this host.
//
// What clients and the coordinator see is exactly what a plain nesting host
// shows (nesting/nesting_host.h owns those rules). This backend proxies each
// request the host lets through to the child of the worker's experiment and
// relays the replies; it arbitrates the children's slot tokens (one budget of `slots`,
// shared by experiment weight); it restarts a child that died, re-creates
// its workers with the same ids (clients restore their sessions by replay),
// kills a child that stops answering or holds a slot past every deadline,
// and answers a step that crashed its child twice with a compile error
// instead of crash-looping (nesting/isolation_guard.h).
#pragma once

#include <sys/types.h>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/process/working_directory.h"
#include "nesting/isolation_guard.h"
#include "nesting/isolation_messages.h"
#include "nesting/isolation_tokens.h"
#include "nesting/underlying_backend.h"

namespace kiln::nesting {

class ChildProcessWorkers final : public UnderlyingBackend {
 public:
  ChildProcessWorkers(const FrontendParts& parts, UnderlyingDirectory& directory);
  ~ChildProcessWorkers() override;

  Status usable() const override { return broken_; }
  Status create(const UnderlyingSpec& spec) override;
  void release(const UnderlyingSpec& spec) override;
  void forget(const UnderlyingSpec& spec, bool lastOfExperiment) override;
  void forward(const UnderlyingSpec& spec, const std::string& routingId,
               InboundMessage message) override;
  void keepAlive(ClientId client, const std::vector<std::uint64_t>& workers) override;
  void addBenchmark(const std::vector<std::uint64_t>& workers,
                    const InboundMessage& message) override;
  void setWeights(const std::map<std::string, std::uint32_t>& weights) override;
  LoadReport load() const override;
  std::size_t dropSessionsOfClientsSilentSince(TimePoint since, const std::string& why) override;
  void onCompletion(Completion) override {}  // the children run every task
  void tick() override;
  void clear() override;
  // Each child gets SIGTERM from the host (isolated_child.h): it answers
  // what it runs, refuses what comes after with the reason, shuts its
  // contexts down and exits 0. One still running after `within` (at least
  // kChildStopGrace) is killed, and the log says so.
  void stopCleanly(Duration within) override;
  zmq::socket_t* socket() override { return &router_; }
  void onSocketReadable() override;

 private:
  // A request sent to a child and not yet answered by it.
  struct Flight {
    std::string routingId;
    std::uint64_t requestId = 0;
    char kind = 0;              // wire request: S start, T step, F fork, P parameter, E end
    std::uint64_t session = 0;  // the session it addresses (the parent for a fork)
    std::uint64_t chain = 0;    // its name for the replay guard; 0 = unnamed
    std::uint64_t inherit = 0;  // chain a started or forked session begins with
    TimePoint deadline;
    bool solo = false;      // a suspect, running alone
    bool answered = false;  // the host already answered it (the child hung)
  };
  struct Outgoing {
    Flight flight;
    zmq::message_t frame;
  };
  struct Child {
    std::string experiment;
    std::string identity;
    pid_t pid = -1;
    bool ready = false;  // said hello
    std::uint64_t generation = 0;
    std::vector<std::vector<std::string>> outbox;  // control messages before hello
    std::map<std::pair<std::string, std::uint64_t>, Flight> inflight;
    std::deque<Outgoing> held;  // requests not sent yet (order kept)
    bool solo = false;
    std::unordered_map<std::uint64_t, std::uint64_t> chains;  // session -> chain so far
    std::deque<TimePoint> tokens;                             // grant times of tokens held
    Duration longestTimeout{};
    bool killedForHang = false;
    TimePoint lastHeard{};  // its last message of any kind
    unsigned restarts = 0;
  };

  // The child that runs the experiment of `workers` (all of one experiment).
  Child* childOf(const std::vector<std::uint64_t>& workers);
  void forward(Child& child, const std::string& routingId, InboundMessage message);
  void pump(Child& child);
  void onChildMessage(const std::string& identity, std::vector<zmq::message_t>& parts);
  void onReply(Child& child, const isolation::ChildReply& reply, zmq::message_t frame);
  void onTokenRequest(Child& child);
  // `crashed`: it died by itself (not a damage stop, see exit_codes.h), so the
  // requests it was running are suspects (IsolationGuard).
  void onChildDied(Child& child, const std::string& how, bool crashed);
  void checkHangs(Child& child, TimePoint now);
  Status spawn(Child& child);
  void sendCreate(Child& child, const UnderlyingSpec& spec);
  void sendToChild(Child& child, std::vector<std::string> parts, bool control);
  void stopChild(Child& child);
  // The children that exited since asked to stop, reaped; how many still run.
  std::size_t reapStopped();
  // Answers what `child` was given or held and never answered, with `why`.
  void answerUnanswered(Child& child, const std::string& why);
  void reply(const std::string& routingId, std::uint64_t requestId, const Status& status);

  FrontendParts parts_;
  UnderlyingDirectory& directory_;
  zmq::context_t zmq_{1};
  zmq::socket_t router_;
  std::optional<WorkingDirectory> socketDirectory_;  // holds the ipc:// socket file
  std::string endpoint_;
  Status broken_ = okStatus();                     // why no child can be started, if none can
  std::map<std::uint64_t, LoadFigures> loads_;     // by worker, as its child reported
  std::map<std::string, Child> children_;          // by experiment
  std::map<std::string, std::string> byIdentity_;  // child routing id -> experiment
  SlotTokens tokens_;
  ReplayGuard guard_;
  std::uint64_t spawned_ = 0;
  bool stopping_ = false;  // stopCleanly() runs
};

// `kiln nest --isolate`: a FIFO pool for the lobby and a nesting host over
// ChildProcessWorkers.
ServingMode isolatingHostMode();

}  // namespace kiln::nesting
