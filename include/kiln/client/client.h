// kiln's C++ client (public). Connects to a coordinator, lists the cluster,
// and starts sessions, which it then drives by talking straight to the worker
// that hosts each one: the coordinator stays off the step path. A Client and
// its Sessions are used from one thread (make one Client per thread); the
// Client must outlive its Sessions. Each Session keeps its benchmark and
// action history so that it can be replayed elsewhere.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/clock.h>
#include <kiln/curve_keys.h>
#include <kiln/frame_limits.h>
#include <kiln/ids.h>
#include <kiln/secret.h>
#include <kiln/space.h>
#include <kiln/underlying.h>
#include <kiln/value.h>

namespace kiln::client {

// Implementation types, defined in private headers: this header needs no
// ZeroMQ, Cap'n Proto or generated schema.
class Channel;
class ChannelFactory;
class LeaseKeeper;
struct RequestIdentity;
struct SameHostRoutes;

struct ClientOptions {
  std::string coordinator;                             // e.g. tcp://10.0.0.1:7700
  Duration requestTimeout = std::chrono::seconds(60);  // per request unless overridden
  Duration leasePeriod = std::chrono::seconds(5);      // keep-alive cadence while idle
  std::string experiment;                              // owning experiment, if any
  // The experiment's key (32 hex digits) as opening it returned it
  // (ExperimentStatus::key): what lets this client act for an experiment
  // another client opened. Not needed by the client that opens it.
  std::string experimentKey;
  FrameLimits frames;
  // Lost sessions of replayable types are rebuilt on another worker (see
  // Session); every this many steps a step also fetches the type's
  // fingerprint observation, which a replay must reproduce. 0 = never.
  bool restoreLostSessions = true;
  unsigned fingerprintEvery = 16;
  // Workers on this client's host (same boot and network namespace) are
  // reached over their ipc:// endpoint, which skips the TCP stack; true
  // keeps every connection on the advertised endpoints.
  bool forceTcp = false;
  // Requests to a worker on this host skip ZeroMQ altogether: they go over
  // a direct channel to the worker's own poll loop (worker/direct_channels.h),
  // about 30 us less per round trip on a VM. false keeps them on ipc://.
  bool directSameHost = true;
  // Requests to a worker on another host go over a direct TCP stream to the
  // worker's own loop (worker/direct_channels.h), skipping both sides'
  // ZeroMQ I/O threads: close to a raw TCP round trip. Only on clusters
  // without a key (the stream is plaintext) and without forceTcp; a worker
  // that offers none, or cannot be reached on its direct port within a
  // second, is reached over ZeroMQ as before.
  bool directAcrossHosts = true;
  // How long a request on a same-host direct channel polls for its reply
  // before the client sleeps (common/base/spin_before_sleep.h): a reply within it
  // costs no wake-up (about 10 us here, 20-30 us more across CPUs on a VM).
  // A worker that keeps answering later stops it after a few misses; a
  // client confined to one CPU never polls. 0 = never poll. Never across
  // hosts: a reply is a network round trip away, and a spin that mostly
  // misses takes a CPU the network stack needs.
  Duration replySpin = std::chrono::microseconds(50);
  // The cluster key (loadKeyFile): every connection is CURVE-authenticated
  // and encrypted. Required when the cluster runs with --key-file.
  std::optional<ClusterKeys> keys;
};

struct WorkerStatus {
  std::uint64_t workerId = 0;
  std::string endpoint;
  std::string localEndpoint;  // ipc:// for clients on its host; empty = none
  std::string hostIdentity;
  std::string hostname;
  std::uint32_t pid = 0;
  std::uint32_t slots = 0;
  std::uint32_t maxSessions = 0;
  std::vector<std::string> sessionTypes;
  std::string version;
  std::uint32_t liveSessions = 0;
  std::uint32_t busySlots = 0;
  std::uint32_t queuedRequests = 0;
  std::uint64_t stepsTotal = 0;
  std::uint32_t msSinceHeard = 0;
  std::uint32_t placedSessions = 0;
  bool nesting = false;
  std::vector<UnderlyingStatus>
      underlying;                  // a nesting host's workers (yours only, in an experiment)
  std::vector<float> utilization;  // busy share of slots, one sample per second
};

struct ExperimentWorker {
  std::uint64_t workerId = 0;  // address it as Envelope.target on its host
  std::uint64_t hostId = 0;
  std::string endpoint;
  bool ready = false;
  LoadFigures load;
};

struct ExperimentStatus {
  ExperimentSpec spec;
  // The experiment's key (32 hex digits): only from openExperiment. Give it
  // to the other clients of the experiment (ClientOptions::experimentKey);
  // whoever holds it may act for the experiment.
  std::string key;
  std::vector<ExperimentWorker> workers;
  std::uint32_t msSinceHeard = 0;
  std::vector<float> utilization;  // busy share of its hosts' slots, one sample per second
  std::size_t readyWorkers() const;
};

struct ClusterStatus {
  std::vector<WorkerStatus> workers;
  std::vector<ExperimentStatus> experiments;
};

struct SessionTypeSpaces {
  std::vector<Space> actionSpaces;
  std::vector<Space> observationSpaces;
  bool replayable = false;  // a lost session can be rebuilt by replaying its history
  std::string fingerprint;  // the observation that proves a replay matched
};

struct SessionOptions {
  std::string sessionType;
  std::string benchmark;                  // URI
  std::optional<std::string> program;     // inline bytes (worker does not share our files)
  std::string actionSpace;                // name; empty = the first
  std::vector<std::string> observations;  // observed right after start
  std::optional<Duration> timeout;
};

struct StepResult {
  std::vector<Value> observations;
  bool endOfEpisode = false;
  bool actionHadNoEffect = false;
  std::optional<Space> newActionSpace;
  std::uint32_t actionsApplied = 0;
  // The worker's wall time in the actions; the rest of the step's round trip
  // is the way there and back, queueing and observing.
  std::chrono::microseconds actionTime{0};
  // The worker's whole time on the step: the actions, then the observations
  // (a reset's: the start's). Not transport or queueing.
  std::chrono::microseconds workerTime{0};
  // The session was rebuilt on another worker (its history replayed) before
  // this step ran there. Its values are what they would have been without
  // the restore; this says that one happened (CompilerGym users read a
  // step's info).
  bool restored = false;
};

// What is needed to rebuild a session elsewhere: replaying it from scratch.
struct SessionHistory {
  struct Parameter {
    std::size_t afterSteps = 0;  // set after this many steps
    std::string key, value;
  };
  struct Fingerprint {
    std::size_t afterSteps = 0;
    Value value;
  };
  SessionOptions options;
  std::vector<std::vector<Value>> steps;   // actions of each successful step, in order
  std::vector<Parameter> parameters;       // session parameters, in order
  std::optional<Fingerprint> fingerprint;  // the latest known state fingerprint
  // For each observation space measured since it was last computed
  // (Space::sinceLastObserved: rewards), after how many steps a step last
  // asked for it. A replay asks for it at that step again, so that its next
  // value is the one the lost session would have given.
  std::map<std::uint32_t, std::size_t> lastObservedAfter;
};

class Session;

// A step sent with Session::sendStep and not yet collected.
struct PendingStep {
  Session* session = nullptr;
  std::uint64_t requestId = 0;
};

// A start sent by Client::beginStarts and not yet collected (finishStart).
// Placed on a worker already; the start itself (the compile) is in flight.
struct PendingStart {
  SessionOptions options;
  Result<SessionTypeSpaces> spaces = internalError("not asked");
  Status placement = internalError("not placed");  // a worker was found for it
  std::string endpoint;                            // that worker
  std::uint64_t target = 0;
  std::uint64_t workerId = 0;                                 // its id at the coordinator
  Result<std::uint64_t> request = internalError("not sent");  // the start request
  TimePoint deadline{};  // when finishStart stops waiting for its answer
};

// What Client::readyReplies found answered: indices into its inputs.
struct ReadyReplies {
  std::vector<std::size_t> steps;
  std::vector<std::size_t> starts;
  bool empty() const { return steps.empty() && starts.empty(); }
};

class Client {
 public:
  static Result<std::unique_ptr<Client>> connect(ClientOptions options);
  // Connects with channels from `channels` instead of ZeroMQ
  // (client/channel.h): the seam for tests with a fake cluster, and for
  // embedding another transport. options.keys is then the factory's business.
  static Result<std::unique_ptr<Client>> connect(ClientOptions options,
                                                 std::unique_ptr<ChannelFactory> channels);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Result<std::vector<WorkerStatus>> listCluster();
  Result<ClusterStatus> clusterStatus();

  // Experiments (client/experiment.cpp). Open creates the experiment or
  // updates its spec; the coordinator then places its workers on nesting
  // hosts. A client whose options name an experiment places every session
  // on that experiment's workers and keeps the experiment open while alive.
  Result<ExperimentStatus> openExperiment(const ExperimentSpec& spec);
  Result<ExperimentStatus> experimentStatus(const std::string& name);
  // Polls until at least `workers` of its workers are ready.
  Result<ExperimentStatus> waitForExperiment(const std::string& name, std::uint32_t workers,
                                             Duration timeout);
  Status closeExperiment(const std::string& name);
  Result<SessionTypeSpaces> getSpaces(const std::string& sessionType);
  Result<std::unique_ptr<Session>> startSession(const SessionOptions& options);
  // Starts many sessions at once (a vector env's resets): every placement,
  // then every start, in flight together, so that the starts run in
  // parallel on the workers. One result per option, in order; a start that
  // met a lost worker is retried as startSession() does.
  std::vector<Result<std::unique_ptr<Session>>> startSessions(
      const std::vector<SessionOptions>& many);
  // startSessions() in two halves, so that a caller can go on while the
  // starts compile (a vector env's resets): beginStarts places every start
  // (all placements in flight together; a coordinator round trip) and sends
  // it to its worker; finishStart collects one, waiting if it must, and
  // retries it as startSession() would when its worker was lost.
  // Takes the options by value: each start keeps its own (with its program's
  // bytes) until it is finished, so a caller that is done with them moves them in.
  std::vector<PendingStart> beginStarts(std::vector<SessionOptions> many);
  Result<std::unique_ptr<Session>> finishStart(PendingStart& start);
  // Whether finishStart(start) returns without waiting for a worker.
  // Reads nothing: readyReplies reads.
  bool startReady(const PendingStart& start);
  // Starts a session on the plain worker at `endpoint`, bypassing placement
  // (pinning an experiment to dedicated workers, tests, benchmarks).
  Result<std::unique_ptr<Session>> startSessionOn(const std::string& endpoint,
                                                  const SessionOptions& options);
  // A worker-level parameter (e.g. service.benchmark_cache.get_size) on one worker.
  Result<std::string> workerParameter(const std::string& endpoint, const std::string& key,
                                      const std::string& value);

  // What workers know this client by: a hash of its secret (common/security/identity.h).
  ClientId id() const;
  const ClientOptions& options() const { return options_; }
  // Where this client's connection to the worker at `endpoint` went (an
  // ipc:// address for a same-host worker); empty before it connected.
  std::string connectedAddress(const std::string& endpoint);
  // Whether requests to the worker at `endpoint` go over a direct channel
  // (ClientOptions::directSameHost, directAcrossHosts); false before the
  // first request.
  bool usesDirectChannel(const std::string& endpoint) const;
  // Sessions rebuilt on another worker after theirs was lost.
  std::uint64_t restoredSessions() const { return restored_; }

  // Many sessions' steps and starts in flight at once, from one thread (a
  // vector env): waits until at least one of `steps` can be collected by
  // awaitStep() without waiting (Session::stepReady), or one of `starts` by
  // finishStart() (startReady), or until `until`; returns the indices of
  // all that can, in order (none when `until` passed first). One wait covers
  // every worker they went to; no thread per session.
  ReadyReplies readyReplies(const std::vector<PendingStep>& steps,
                            const std::vector<const PendingStart*>& starts, TimePoint until);

 private:
  friend class Session;
  Client(ClientOptions options, std::unique_ptr<ChannelFactory> channels);
  Channel& channelTo(const std::string& endpoint);
  void noteRoute(const std::string& endpoint, std::string localEndpoint, std::string hostIdentity);
  // Remembers the pass a placement on `endpoint` carried (Placement.clientPass).
  void notePass(const std::string& endpoint, std::string_view pass);
  // The worker's --max-message-bytes, as its placement said (0 = not said):
  // its channel refuses larger requests before sending (Channel::limitRequests).
  void noteMessageLimit(const std::string& endpoint, std::uint64_t bytes);
  Result<std::unique_ptr<Session>> startOn(const std::string& endpoint, std::uint64_t target,
                                           const SessionOptions& options,
                                           const SessionTypeSpaces& spaces);
  struct Placed {
    std::string endpoint;
    std::uint64_t target = 0;
    std::uint64_t workerId = 0;  // the coordinator's id of the worker (or nesting host)
  };
  // A worker for a new session, avoiding endpoints recently seen dying.
  // `benchmark` lets the coordinator prefer a worker that has it cached.
  Result<Placed> place(const std::string& sessionType, const std::string& benchmark,
                       Duration timeout);
  Result<Placed> placeOnce(const std::string& sessionType, const std::string& benchmark,
                           Duration timeout);
  // place(), asked again (after 0.1 s, doubling to 1 s) while it fails with a
  // code `waitOn` accepts, until `deadline`.
  Result<Placed> placeWaiting(const std::string& sessionType, const std::string& benchmark,
                              TimePoint deadline, bool (*waitOn)(ErrorCode));
  // Drops channels to dead workers and forgets losses seen long ago.
  void beforePlacing();
  // placeOnce() and startOn() in two halves, for many in flight at once.
  Result<std::uint64_t> sendPlace(const std::string& sessionType, const std::string& benchmark,
                                  Duration timeout);
  Result<Placed> awaitPlace(std::uint64_t request, TimePoint deadline);
  Result<std::uint64_t> sendStart(const std::string& endpoint, std::uint64_t target,
                                  const SessionOptions& options, const SessionTypeSpaces& spaces);
  Result<std::unique_ptr<Session>> awaitStart(const std::string& endpoint, std::uint64_t target,
                                              const SessionOptions& options,
                                              const SessionTypeSpaces& spaces,
                                              std::uint64_t request, TimePoint deadline);
  // The worker at `endpoint` is gone: placements avoid it for a while. By
  // its id when known (a worker started again at the same endpoint is
  // another process, and welcome), else by its endpoint.
  void noteLost(const std::string& endpoint, std::uint64_t workerId = 0);
  // `status` from a request to `endpoint`, unless it is a timeout and the
  // coordinator no longer lists that server (its heartbeats stopped: the
  // process is stuck or gone): then the channel is marked lost, so that no
  // other request waits out its deadline there, and "disconnected" is
  // returned, which a session treats as a loss (restore by replay).
  Status timeoutMeansGone(const std::string& endpoint, Status status);
  // Drops channels to workers that died (their sockets reconnect forever and
  // hold descriptors) once no request and none of our sessions is there.
  void dropDeadChannels();
  // Forgets a request sent on `endpoint`'s channel, if that channel still exists.
  void abandon(const std::string& endpoint, std::uint64_t requestId);

  // The key to present for experiment `name`: the one this client opened it
  // with, or its own experiment's; empty if it holds none.
  Secret keyFor(const std::string& name) const;

  ClientOptions options_;
  std::unique_ptr<RequestIdentity> identity_;
  std::unique_ptr<ChannelFactory> channels_;  // outlives every channel below
  std::unique_ptr<Channel> coordinator_;
  std::map<std::string, std::unique_ptr<Channel>> workers_;
  std::string hostIdentity_;                            // ours, for same-host routes
  std::unique_ptr<SameHostRoutes> routes_;              // worker endpoint -> its same-host route
  std::map<std::string, std::uint64_t> messageLimits_;  // worker endpoint -> its message limit
  std::map<std::string, SessionTypeSpaces> spaces_;
  std::unique_ptr<LeaseKeeper> leases_;
  // Recently seen dying: the worker (one process's registration) where a
  // placement named it, else the endpoint; avoided by placements for 30 s.
  std::map<std::uint64_t, TimePoint> lostWorkers_;
  std::map<std::string, TimePoint> lostEndpoints_;
  // Experiments this client opened, to open again when a restarted
  // coordinator no longer knows them (its hosts' workers are then adopted).
  struct Opened {
    ExperimentSpec spec;
    Secret key;
  };
  std::map<std::string, Opened> opened_;
  std::uint64_t restored_ = 0;
};

// A session's requests go to the worker that hosts it. When that worker is
// lost (its connection drops, or it no longer knows the session), a session
// of a replayable type is rebuilt transparently: placed on another worker,
// started from the same benchmark, its parameters and actions replayed, its
// fingerprint checked, and the failed request re-sent. Other types report
// "disconnected" (session lost).
class Session {
 public:
  ~Session();  // ends the session without waiting for the answer
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // One round trip: apply `actions` in order, then compute the observations
  // (indices into the observation spaces of the type).
  Result<StepResult> step(const std::vector<Value>& actions,
                          const std::vector<std::uint32_t>& observations);
  Result<StepResult> step(const std::vector<Value>& actions,
                          const std::vector<std::string>& observations);

  // Pipelining: send now, collect later (many sessions in flight at once).
  Result<std::uint64_t> sendStep(const std::vector<Value>& actions,
                                 const std::vector<std::uint32_t>& observations);
  Result<StepResult> awaitStep(std::uint64_t requestId);
  // Whether awaitStep(requestId) returns without waiting for the worker:
  // its reply (or its failure) is here or its time is up. A step that must
  // be sent again after a restore says yes (awaitStep then sends it and
  // waits for that one). Reads nothing: Client::readyReplies reads.
  bool stepReady(std::uint64_t requestId);
  // When awaitStep(requestId) gives up waiting (the step's timeout after it
  // was sent); the distant future for a step not in flight.
  TimePoint stepDeadline(std::uint64_t requestId) const;

  Result<std::unique_ptr<Session>> fork();
  // The compiler its worker runs for this session's type, as the worker
  // says it ("LLVM 19.1.7 (pass table 3f2a...)"): what a result was made with.
  Result<std::string> compilerVersion();
  Status end();
  Result<std::string> setParameter(const std::string& key, const std::string& value);
  // How many times this session was rebuilt after losing its worker.
  std::uint32_t restores() const { return restores_; }
  // Whether the episode ended in a restore: a step of the history, replayed
  // on another worker, got a compile error, which the request that needed the
  // restore returned. Those steps had succeeded before, so unlike a compile
  // error of the request itself this says the replay did not reproduce them.
  bool endedInRestore() const { return endedInRestore_; }

  SessionId id() const { return id_; }
  const std::string& endpoint() const { return endpoint_; }
  std::uint64_t target() const { return target_; }
  bool ended() const { return ended_; }
  const std::vector<Value>& initialObservations() const { return initial_; }
  // The worker's time on this session's start (benchmark, module, first
  // observations); zero for a fork or a restored session.
  std::chrono::microseconds startWorkerTime() const { return startWorkerTime_; }
  const SessionHistory& history() const { return history_; }
  const SessionTypeSpaces& spaces() const { return spaces_; }
  Result<std::uint32_t> observationIndex(const std::string& name) const;

 private:
  friend class Client;
  Session(Client& client, std::string endpoint, std::uint64_t target, SessionId id,
          SessionTypeSpaces spaces, SessionHistory history, std::vector<Value> initial);
  Duration timeout() const;
  struct InFlight {
    std::vector<Value> actions;
    std::vector<std::uint32_t> observations;
    std::uint32_t epoch = 0;   // restores_ when sent
    TimePoint sentAt{};        // its deadline runs from here, not from the await
    int fingerprintSlot = -1;  // index of the fingerprint among observations
    bool userAskedFingerprint = false;
    bool restored = false;  // the session was restored before this step was sent
  };
  Result<std::uint64_t> sendStepRaw(const std::vector<Value>& actions,
                                    const std::vector<std::uint32_t>& observations);
  // `refused`: the error of an action refused after the first
  // result.actionsApplied of the step ran (they stay applied).
  Result<StepResult> awaitStepRaw(std::uint64_t requestId, TimePoint deadline, Status& refused);
  // Records the applied actions in the history; `refused` is then returned.
  Result<StepResult> finishStep(InFlight sent, StepResult result, const Status& refused);
  static bool isLoss(const Status& status);
  // Rebuilds the session elsewhere (see the class comment).
  Status restore(const Status& why);
  // `diverged`: the replay ran, but its fingerprint differs from the original's.
  Status replayOn(Session& fresh, bool& diverged);
  // What a replay's step `step` (1-based) asks for: the fingerprint where it
  // was taken (first, when asked), then every since-last-observed space last
  // computed after that step.
  std::vector<std::uint32_t> replayObservations(std::size_t step, bool withFingerprint) const;

  Client& client_;
  std::string endpoint_;
  std::uint64_t target_ = 0;    // underlying worker on a nesting host
  std::uint64_t workerId_ = 0;  // the coordinator's id of its worker; 0 = not placed by it
  SessionId id_;
  SessionTypeSpaces spaces_;
  std::optional<std::uint32_t> fingerprintIndex_;  // in spaces_.observationSpaces, if replayable
  SessionHistory history_;
  std::vector<Value> initial_;
  bool ended_ = false;
  std::map<std::uint64_t, InFlight> inflight_;  // request id -> what it asked
  std::string lostEndpoint_;                    // where requests sent before a restore went
  std::uint32_t restores_ = 0;
  bool endedInRestore_ = false;
  std::chrono::microseconds startWorkerTime_{0};
};

}  // namespace kiln::client
