# kiln's wire protocol. Every message on every socket is one Envelope: a
# protocol version, a request id that the reply echoes, routing fields for
# nesting hosts and experiments, and exactly one request, reply or heartbeat.
#
# Sequences:
#   worker -> coordinator: register -> registered; then heartbeats both ways
#     on the same socket (any message counts as one).
#   client -> coordinator: place(sessionType) -> placement(worker endpoint)
#   client -> worker:      startSession -> sessionStarted; step* ; fork ; endSession
#   experiments (nesting): client -> coordinator openExperiment(spec); the
#     coordinator plans the experiment's underlying workers on nesting hosts
#     and sends createWorker/releaseWorker to the hosts on their link socket;
#     hosts report their underlying workers in every heartbeat; the client
#     polls getExperiment until they are ready, then place(experiment) gives
#     (host endpoint, underlying worker id) and every session request to that
#     host carries the id in Envelope.target.
@0xfc906c4afdb399a0;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("kiln::wire");

const protocolVersion :UInt16 = 2;

# ---------------------------------------------------------------- values

struct Int64Tensor  { shape @0 :List(Int64); values @1 :List(Int64); }
struct FloatTensor  { shape @0 :List(Int64); values @1 :List(Float32); }
struct DoubleTensor { shape @0 :List(Int64); values @1 :List(Float64); }

struct Value {
  union {
    none @0 :Void;
    boolean @1 :Bool;
    int64 @2 :Int64;
    double @3 :Float64;
    string @4 :Text;
    bytes @5 :Data;
    int64Tensor @6 :Int64Tensor;
    floatTensor @7 :FloatTensor;
    doubleTensor @8 :DoubleTensor;
    list @9 :List(Value);
    dict @10 :List(NamedValue);
  }
}

struct NamedValue { name @0 :Text; value @1 :Value; }

# Absent bounds are unbounded.
struct Int64Range {
  hasMin @0 :Bool; min @1 :Int64;
  hasMax @2 :Bool; max @3 :Int64;
}
struct DoubleRange {
  hasMin @0 :Bool; min @1 :Float64;
  hasMax @2 :Bool; max @3 :Float64;
}

enum SpaceKind {
  discrete @0; namedDiscrete @1; int64 @2; double @3; int64Box @4; floatBox @5;
  doubleBox @6; string @7; bytes @8; list @9; dict @10; any @11;
}

struct Space {
  name @0 :Text;
  kind @1 :SpaceKind;
  deterministic @2 :Bool;
  platformDependent @3 :Bool;
  defaultValue @4 :Value;
  n @5 :Int64;
  names @6 :List(Text);
  int64Range @7 :Int64Range;
  doubleRange @8 :DoubleRange;
  shape @9 :List(Int64);
  members @10 :List(Space);
  # Added without a protocol bump: an older peer ignores them, a newer one
  # reads them as empty. aliases[i]: another accepted name of choice i ("" =
  # none; empty list = no aliases). metadata: what the session type says about
  # its choices (e.g. the llvm type's exact pipelines), none if nothing.
  aliases @11 :List(Text);
  metadata @12 :Value;
  # The value is measured since the session last computed this space (a
  # reward): a replay computes it again where the original last did. An older
  # peer reads false.
  sinceLastObserved @13 :Bool;
}

# ---------------------------------------------------------------- errors

# The codes are written here at configure time from schema/error_codes.txt,
# the one list C++, this schema and Python are made from.
enum ErrorCode {
@KILN_ERROR_CODES_CAPNP@}

struct Error { code @0 :ErrorCode; message @1 :Text; }

# ---------------------------------------------------------------- session RPCs

struct Benchmark {
  uri @0 :Text;
  program @1 :Data;   # inline bytes for workers that do not share a file system; empty = resolve uri
}

struct GetSpaces { sessionType @0 :Text; }
struct Spaces {
  actionSpaces @0 :List(Space);
  observationSpaces @1 :List(Space);
  replay @2 :ReplayInfo;
}

# Whether a lost session of this type can be rebuilt elsewhere by replaying
# its benchmark and actions, and the observation that proves it worked.
struct ReplayInfo {
  deterministic @0 :Bool;
  fingerprint @1 :Text;             # observation space name; empty = none
}

struct StartSession {
  sessionType @0 :Text;
  benchmark @1 :Benchmark;
  actionSpace @2 :UInt32;
  observationSpaces @3 :List(UInt32);   # observed right after start
}
struct SessionStarted {
  sessionId @0 :UInt64;
  observations @1 :List(Value);
  benchmarkCached @2 :Bool;             # the benchmark came from the worker's cache
  workerMicros @3 :UInt64;              # the worker's time on the start: benchmark, module,
                                        # first observations
}

struct Step {
  sessionId @0 :UInt64;
  actions @1 :List(Value);
  observationSpaces @2 :List(UInt32);
}
struct Stepped {
  observations @0 :List(Value);
  endOfEpisode @1 :Bool;
  actionHadNoEffect @2 :Bool;
  hasNewActionSpace @3 :Bool;
  newActionSpace @4 :Space;
  actionsApplied @5 :UInt32;            # actions before the episode ended (<= actions sent)
  actionMicros @6 :UInt64;              # worker wall time in the actions (an MLGO step: the
                                        # compiler's time to its next decision); the rest of a
                                        # step's round trip is transport, queueing and observing
  refusal @7 :Error;                    # set when an action was refused after the first
                                        # actionsApplied ran: those stay applied (the client
                                        # records them), no observation is sent, the step fails
  workerMicros @8 :UInt64;              # the worker's whole time on the step: the actions,
                                        # then the observations (not transport or queueing)
}

struct Fork { sessionId @0 :UInt64; }
struct Forked { sessionId @0 :UInt64; }

struct EndSession { sessionId @0 :UInt64; }
struct Ended { remainingSessions @0 :UInt32; }

struct AddBenchmark { benchmarks @0 :List(Benchmark); }

# sessionId 0 addresses the worker itself (e.g. service.benchmark_cache.*).
struct SendSessionParameter { sessionId @0 :UInt64; key @1 :Text; value @2 :Text; }
struct ParameterReply { reply @0 :Text; }

struct GetVersion {}
struct Version {
  protocolVersion @0 :UInt16;
  serviceVersion @1 :Text;
  compilerVersion @2 :Text;
  sessionTypes @3 :List(Text);
}

# Asks a worker for a direct channel (worker/direct_channels.h): the address
# of its local stream socket ("@name"), or with acrossHosts its TCP listener
# ("tcp://host:port", reached on the host of the worker's endpoint), and a
# single-use token that the connection must send first.
struct OpenDirect { acrossHosts @0 :Bool; }
struct DirectOpened { address @0 :Text; token @1 :Data; }

# Keeps the sessions of one client alive (their lease) while it is idle.
struct KeepAlive {}

# ---------------------------------------------------------------- cluster RPCs

struct RegisterWorker {
  endpoint @0 :Text;                # where clients reach this worker's sessions
  slots @1 :UInt32;                 # sessions stepped in parallel
  maxSessions @2 :UInt32;           # live sessions it accepts
  sessionTypes @3 :List(Text);
  version @4 :Text;
  hostname @5 :Text;
  pid @6 :UInt32;
  nesting @7 :Bool;                 # hosts underlying workers by id (kiln nest)
  underlying @8 :List(UnderlyingStatus);   # what it already runs (re-registration)
  localEndpoint @9 :Text;           # ipc:// endpoint for clients on the same host; empty = none
  hostIdentity @10 :Text;           # boot id/network namespace/hostname; empty = unknown
  token @11 :Data;                  # the operator's registration token (--worker-token-file):
                                    # a coordinator that has one registers only its holders
  passKey @12 :Data;                # 16 random bytes this worker process drew: the coordinator
                                    # makes the client passes it hands out for this worker with
                                    # it (common/security/identity.h); never sent anywhere else
  maxMessageBytes @13 :UInt64;      # its --max-message-bytes, which placements pass on to
                                    # clients; 0 = not said (an older worker)
}
struct Registered { workerId @0 :UInt64; heartbeatIntervalMs @1 :UInt32; }

struct Load {
  liveSessions @0 :UInt32;
  busySlots @1 :UInt32;
  queuedRequests @2 :UInt32;
  stepsTotal @3 :UInt64;
}

# One underlying worker of a nesting host: who owns it and what it may do.
struct UnderlyingSpec {
  workerId @0 :UInt64;              # chosen by the coordinator; 0 in createWorker = host chooses
  experiment @1 :Text;              # the only experiment that may see or address it
  weight @2 :UInt32;                # share of the host's slots under contention (0 = 1)
  maxSessions @3 :UInt32;           # 0 = the host's limit
  sessionTypes @4 :List(Text);      # empty = every type the host serves
  experimentPass @5 :Data;          # the experiment's pass on this host (common/security/identity.h):
                                    # requests for this worker must present it; views strip it
}
struct UnderlyingStatus { spec @0 :UnderlyingSpec; load @1 :Load; }

struct Heartbeat {
  workerId @0 :UInt64;
  load @1 :Load;
  underlying @2 :List(UnderlyingStatus);   # nesting hosts only
}

struct CreateWorker { spec @0 :UnderlyingSpec; }
struct WorkerCreated { workerId @0 :UInt64; }
struct ReleaseWorker { workerId @0 :UInt64; }
struct WorkerReleased { sessionsEnded @0 :UInt32; }
struct ListUnderlying {}            # on a nesting host: the caller's experiment's workers
struct UnderlyingView { workers @0 :List(UnderlyingStatus); }

# Experiments: named tenants sharing nesting hosts.
struct ExperimentSpec {
  name @0 :Text;
  workers @1 :UInt32;               # underlying workers requested
  weight @2 :UInt32;                # fair-share weight on every host (0 = 1)
  maxSessions @3 :UInt32;           # per underlying worker; 0 = host limit
  sessionTypes @4 :List(Text);
  pack @5 :Bool;                    # fill hosts one by one instead of spreading
}
struct OpenExperiment { spec @0 :ExperimentSpec; }
struct CloseExperiment { name @0 :Text; }
struct GetExperiment { name @0 :Text; }
struct ExperimentWorker {
  workerId @0 :UInt64;
  hostId @1 :UInt64;
  endpoint @2 :Text;
  ready @3 :Bool;                   # the host reported it
  load @4 :Load;
}
struct ExperimentView {
  spec @0 :ExperimentSpec;
  workers @1 :List(ExperimentWorker);
  msSinceHeard @2 :UInt32;
  utilization @3 :List(Float32);    # busy share of its workers' hosts, one sample per second, oldest first
  key @4 :Data;                     # the experiment's key: only in the answer to openExperiment
}

struct WorkerInfo {
  workerId @0 :UInt64;
  endpoint @1 :Text;
  slots @2 :UInt32;
  maxSessions @3 :UInt32;
  sessionTypes @4 :List(Text);
  version @5 :Text;
  hostname @6 :Text;
  pid @7 :UInt32;
  load @8 :Load;
  msSinceHeard @9 :UInt32;
  placedSessions @10 :UInt32;       # placements not yet visible in load
  nesting @11 :Bool;
  underlying @12 :List(UnderlyingStatus);
  utilization @13 :List(Float32);   # busy slots / slots, one sample per second, oldest first
  localEndpoint @14 :Text;          # as registered (RegisterWorker)
  hostIdentity @15 :Text;
}

struct ListCluster {}
struct ClusterView { workers @0 :List(WorkerInfo); experiments @1 :List(ExperimentView); }

# With Envelope.experiment set, placement picks one of that experiment's
# underlying workers and names it in `target`.
struct Place {
  sessionType @0 :Text;
  avoid @1 :List(Text);             # worker endpoints the client saw die
  benchmark @2 :Text;               # the session's benchmark URI: placed near its cached copies
  avoidWorkers @3 :List(UInt64);    # worker ids (one process each) the client saw die: a worker
                                    # started again at the same endpoint is a new id, not avoided
  worker @4 :Text;                  # set: the endpoint of the plain worker the caller names
                                    # (Client::startSessionOn): its placement, with the caller's
                                    # pass there, or notFound
}
struct Placement {
  workerId @0 :UInt64;
  endpoint @1 :Text;
  target @2 :UInt64;
  localEndpoint @3 :Text;           # the worker's same-host endpoint (RegisterWorker)
  hostIdentity @4 :Text;
  clientPass @5 :Data;              # the caller's pass for this worker (Envelope.clientPass):
                                    # good on this worker only; empty = the caller sent no secret
  maxMessageBytes @6 :UInt64;       # the worker's --max-message-bytes: the client refuses a
                                    # larger request before sending it (over ZeroMQ a frame over
                                    # twice that is cut, which looks like a lost worker);
                                    # 0 = not known (an older coordinator or worker)
}

# ---------------------------------------------------------------- envelope

struct Request {
  union {
    getVersion @0 :GetVersion;
    getSpaces @1 :GetSpaces;
    startSession @2 :StartSession;
    step @3 :Step;
    fork @4 :Fork;
    endSession @5 :EndSession;
    addBenchmark @6 :AddBenchmark;
    sendSessionParameter @7 :SendSessionParameter;
    keepAlive @8 :KeepAlive;
    registerWorker @9 :RegisterWorker;
    listCluster @10 :ListCluster;
    place @11 :Place;
    createWorker @12 :CreateWorker;
    releaseWorker @13 :ReleaseWorker;
    listUnderlying @14 :ListUnderlying;
    openExperiment @15 :OpenExperiment;
    closeExperiment @16 :CloseExperiment;
    getExperiment @17 :GetExperiment;
    openDirect @18 :OpenDirect;
  }
}

struct Reply {
  union {
    error @0 :Error;
    version @1 :Version;
    spaces @2 :Spaces;
    sessionStarted @3 :SessionStarted;
    stepped @4 :Stepped;
    forked @5 :Forked;
    ended @6 :Ended;
    benchmarkAdded @7 :Void;
    parameterReply @8 :ParameterReply;
    keptAlive @9 :Void;
    registered @10 :Registered;
    clusterView @11 :ClusterView;
    placement @12 :Placement;
    workerCreated @13 :WorkerCreated;
    workerReleased @14 :WorkerReleased;
    underlyingView @15 :UnderlyingView;
    experimentView @16 :ExperimentView;
    directOpened @17 :DirectOpened;
  }
}

# Identity (common/security/identity.h, docs/security.md): a client is who its secret
# says, an experiment's client is who presents the key the coordinator issued
# when the experiment was opened. No field is taken on its word.
struct Envelope {
  protocolVersion @0 :UInt16;
  requestId @1 :UInt64;         # echoed by the reply; 0 for heartbeats
  timeoutMs @2 :UInt32;         # the caller's deadline for this request; 0 = server default
                                # (the operator's deadline caps it)
  clientSecret @3 :Data;        # 16 random bytes the client drew; servers know it by a hash
                                # of them, which owns the sessions it creates (leases, quotas)
  target @4 :UInt64;            # underlying worker id on a nesting host; 0 = this process
  experiment @5 :Text;          # the experiment it acts for (with experimentKey or experimentPass)
  union {
    request @6 :Request;
    reply @7 :Reply;
    heartbeat @8 :Heartbeat;
    disconnect @9 :Error;       # "I do not know you": re-register on a fresh socket
  }
  experimentKey @10 :Data;      # the key of `experiment`, as openExperiment answered it: to
                                # the coordinator only
  # A client's identity on a worker it was placed on, instead of its secret,
  # which only the coordinator sees: clientId = the hash of its secret, and
  # clientPass = the pass the placement carried, a MAC of clientId under the
  # worker's own passKey. Another worker cannot check it, so a worker that
  # captures it cannot act as the client anywhere else.
  clientId @11 :UInt64;
  clientPass @12 :Data;
  # An experiment's identity on a nesting host, instead of its key, which
  # only the coordinator sees: a MAC of the host's endpoint under the key's
  # digest (common/security/identity.h). Good on that host alone.
  experimentPass @13 :Data;
}
