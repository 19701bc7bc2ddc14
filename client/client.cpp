#include <kiln/client/client.h>

#include <fmt/format.h>

#include <thread>

#include "client/channel.h"
#include "client/lease_keeper.h"
#include "client/session_codec.h"
#include "client/zmq_channel.h"
#include "common/base/wire_convert.h"
#include "common/transport/local_transport.h"
#include "common/types/underlying_wire.h"

namespace kiln::client {
namespace {

// How long a new channel waits for a same-host worker to grant a direct
// channel: a live one answers in well under a millisecond.
constexpr Duration kDirectOpenTimeout = std::chrono::seconds(1);

}  // namespace

// Kept out of client.h: the public header needs no transport types.
struct SameHostRoutes {
  std::map<std::string, LocalRoute> byEndpoint;
};

ClientId Client::id() const { return clientIdOf(wireBytes(identity_->clientSecret)); }

Client::Client(ClientOptions options, std::unique_ptr<ChannelFactory> channels)
    : options_(std::move(options)),
      identity_(std::make_unique<RequestIdentity>()),
      channels_(std::move(channels)),
      routes_(std::make_unique<SameHostRoutes>()) {
  identity_->experiment = options_.experiment;
}

Client::~Client() {
  leases_.reset();
  workers_.clear();
  coordinator_.reset();
}

Result<std::unique_ptr<Client>> Client::connect(ClientOptions options) {
  auto channels = std::make_unique<ZmqChannelFactory>(options.keys);
  return connect(std::move(options), std::move(channels));
}

Result<std::unique_ptr<Client>> Client::connect(ClientOptions options,
                                                std::unique_ptr<ChannelFactory> channels) {
  if (options.coordinator.empty()) {
    return invalidArgument("no coordinator address given (e.g. tcp://127.0.0.1:7700)");
  }
  if (!channels) return invalidArgument("no channel factory given");
  std::unique_ptr<Client> client(new Client(std::move(options), std::move(channels)));
  if (!client->options_.experimentKey.empty()) {
    if (client->options_.experiment.empty()) {
      return invalidArgument(
          "an experiment key needs the experiment's name (ClientOptions::experiment)");
    }
    KILN_ASSIGN_OR_RETURN(client->identity_->experimentKey,
                          Secret::fromHex(client->options_.experimentKey));
  }
  const ClientOptions& o = client->options_;
  auto coordinator =
      client->channels_->open(o.coordinator, std::string(), *client->identity_, o.frames);
  if (!coordinator.ok()) {
    return invalidArgument(fmt::format("bad coordinator address '{}': {}", o.coordinator,
                                       coordinator.status().message()));
  }
  client->coordinator_ = std::move(coordinator).value();
  client->coordinator_->carrySecret();  // the only server that sees it
  if (!o.forceTcp) client->hostIdentity_ = currentHostIdentity();
  client->leases_ = std::make_unique<LeaseKeeper>(
      client->channels_->keepAliveSender(), *client->identity_, o.leasePeriod,
      o.experiment.empty() ? std::string() : o.coordinator);
  return client;
}

Channel& Client::channelTo(const std::string& endpoint) {
  auto& channel = workers_[endpoint];
  if (!channel) {
    auto route = routes_->byEndpoint.find(endpoint);
    std::string address = chooseWorkerAddress(
        endpoint, route == routes_->byEndpoint.end() ? LocalRoute{} : route->second, hostIdentity_,
        options_.forceTcp ? TransportChoice::kTcpOnly : TransportChoice::kPreferLocal);
    auto opened = channels_->open(endpoint, address, *identity_, options_.frames);
    // A worker address that is no address (from a broken coordinator) fails
    // each request there with why, not the process.
    channel = opened.ok() ? std::move(opened).value()
                          : unreachableChannel(endpoint, *identity_, opened.status());
    if (auto limit = messageLimits_.find(endpoint); limit != messageLimits_.end()) {
      channel->limitRequests(limit->second);
    }
    const bool sameHost = address != endpoint;
    const bool acrossHosts = !sameHost && options_.directAcrossHosts && !options_.forceTcp &&
                             !options_.keys && endpoint.starts_with("tcp://");
    if ((sameHost && options_.directSameHost) || acrossHosts) {
      // A worker that offers none (a nesting host), or that does not answer
      // at once, is reached over ZeroMQ as before; the wait is short so that
      // a worker that just died costs little here.
      (void)channel->openDirect(std::min<Duration>(options_.requestTimeout, kDirectOpenTimeout));
      // A reply from another host is at least a network round trip away: a
      // spin there mostly misses, and takes a CPU the network stack needs.
      if (sameHost) channel->spinForReplies(options_.replySpin);
    }
  }
  return *channel;
}

void Client::noteRoute(const std::string& endpoint, std::string localEndpoint,
                       std::string hostIdentity) {
  LocalRoute route{std::move(localEndpoint), std::move(hostIdentity)};
  auto known = routes_->byEndpoint.find(endpoint);
  if (known != routes_->byEndpoint.end() && known->second.endpoint == route.endpoint &&
      known->second.hostIdentity == route.hostIdentity) {
    return;
  }
  routes_->byEndpoint[endpoint] = std::move(route);
  // A worker restarted on the same TCP endpoint has a new local one: the
  // next request reconnects, unless requests still wait on the old socket.
  auto channel = workers_.find(endpoint);
  if (channel != workers_.end() && channel->second->outstanding() == 0) workers_.erase(channel);
}

bool Client::usesDirectChannel(const std::string& endpoint) const {
  auto channel = workers_.find(endpoint);
  return channel != workers_.end() && channel->second->direct();
}

std::string Client::connectedAddress(const std::string& endpoint) {
  auto channel = workers_.find(endpoint);
  return channel == workers_.end() ? std::string() : channel->second->connectedAddress();
}

Result<std::vector<WorkerStatus>> Client::listCluster() {
  KILN_ASSIGN_OR_RETURN(ClusterStatus status, clusterStatus());
  return std::move(status.workers);
}

Result<ClusterStatus> Client::clusterStatus() {
  capnp::MallocMessageBuilder builder(64);
  coordinator_->begin(builder, options_.requestTimeout).initRequest().initListCluster();
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, coordinator_->call(builder, options_.requestTimeout));
  ClusterStatus status;
  auto view = reply.envelope().getReply().getClusterView();
  for (auto experiment : view.getExperiments()) {
    status.experiments.push_back(decodeExperiment(experiment));
  }
  std::vector<WorkerStatus>& workers = status.workers;
  for (auto info : view.getWorkers()) {
    WorkerStatus w;
    w.workerId = info.getWorkerId();
    w.endpoint = info.getEndpoint().cStr();
    w.localEndpoint = info.getLocalEndpoint().cStr();
    w.hostIdentity = info.getHostIdentity().cStr();
    noteRoute(w.endpoint, w.localEndpoint, w.hostIdentity);
    w.hostname = info.getHostname().cStr();
    w.pid = info.getPid();
    w.slots = info.getSlots();
    w.maxSessions = info.getMaxSessions();
    for (auto type : info.getSessionTypes()) w.sessionTypes.emplace_back(type.cStr());
    w.version = info.getVersion().cStr();
    w.liveSessions = info.getLoad().getLiveSessions();
    w.busySlots = info.getLoad().getBusySlots();
    w.queuedRequests = info.getLoad().getQueuedRequests();
    w.stepsTotal = info.getLoad().getStepsTotal();
    w.msSinceHeard = info.getMsSinceHeard();
    w.placedSessions = info.getPlacedSessions();
    w.nesting = info.getNesting();
    for (auto underlying : info.getUnderlying()) w.underlying.push_back(fromWire(underlying));
    for (float sample : info.getUtilization()) w.utilization.push_back(sample);
    workers.push_back(std::move(w));
  }
  return status;
}

Result<SessionTypeSpaces> Client::getSpaces(const std::string& sessionType) {
  if (auto cached = spaces_.find(sessionType); cached != spaces_.end()) return cached->second;
  KILN_ASSIGN_OR_RETURN(auto workers, listCluster());
  std::string endpoint;
  for (const WorkerStatus& worker : workers) {
    for (const std::string& type : worker.sessionTypes) {
      if (type == sessionType) endpoint = worker.endpoint;
    }
  }
  if (endpoint.empty()) {
    return notFound(fmt::format("no worker in the cluster hosts session type '{}'", sessionType));
  }
  Channel& channel = channelTo(endpoint);
  capnp::MallocMessageBuilder builder(128);
  channel.begin(builder, options_.requestTimeout)
      .initRequest()
      .initGetSpaces()
      .setSessionType(sessionType);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, channel.call(builder, options_.requestTimeout));
  KILN_ASSIGN_OR_RETURN(SessionTypeSpaces spaces,
                        decodeSpaces(reply.envelope().getReply().getSpaces()));
  spaces_[sessionType] = spaces;
  return spaces;
}

Result<std::unique_ptr<Session>> Client::startSession(const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(SessionTypeSpaces spaces, getSpaces(options.sessionType));
  Duration timeout = options.timeout.value_or(options_.requestTimeout);
  // No room right now (a worker restarting after a crash in compile work,
  // a full cluster) is waited out within the start's timeout, as a restore
  // does: a user's reset after a crash must not fail for it.
  const auto waitOn = [](ErrorCode code) { return code == ErrorCode::kOverloaded; };
  const TimePoint deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0;; ++attempt) {
    KILN_ASSIGN_OR_RETURN(Placed placed,
                          placeWaiting(options.sessionType, options.benchmark, deadline, waitOn));
    auto started = startOn(placed.endpoint, placed.target, options, spaces);
    if (started.ok()) (*started)->workerId_ = placed.workerId;
    // A worker that died under the start holds no session of ours: place
    // the start elsewhere, as a restore would.
    if (started.ok() || attempt == 2 || started.status().code() != ErrorCode::kDisconnected ||
        !channelTo(placed.endpoint).peerLost()) {
      return started;
    }
    noteLost(placed.endpoint, placed.workerId);
  }
}

std::vector<Result<std::unique_ptr<Session>>> Client::startSessions(
    const std::vector<SessionOptions>& many) {
  std::vector<PendingStart> pending = beginStarts(many);
  std::vector<Result<std::unique_ptr<Session>>> started;
  started.reserve(pending.size());
  for (PendingStart& one : pending) started.push_back(finishStart(one));
  return started;
}

std::vector<PendingStart> Client::beginStarts(std::vector<SessionOptions> many) {
  // Placements, then starts, each all in flight at once: the coordinator and
  // the workers see them together, and the starts run in parallel on the
  // workers' slots.
  std::vector<PendingStart> pending(many.size());
  std::vector<Result<std::uint64_t>> placements(many.size(), internalError("not sent"));
  beforePlacing();
  for (std::size_t i = 0; i < many.size(); ++i) {
    pending[i].options = std::move(many[i]);
    const SessionOptions& options = pending[i].options;
    pending[i].spaces = getSpaces(options.sessionType);
    if (!pending[i].spaces.ok()) continue;
    placements[i] = sendPlace(options.sessionType, options.benchmark,
                              options.timeout.value_or(options_.requestTimeout));
  }
  for (std::size_t i = 0; i < many.size(); ++i) {
    PendingStart& one = pending[i];
    if (!one.spaces.ok()) continue;
    const Duration timeout = one.options.timeout.value_or(options_.requestTimeout);
    Result<Placed> placed =
        placements[i].ok() ? awaitPlace(*placements[i], std::chrono::steady_clock::now() + timeout)
                           : Result<Placed>(placements[i].status());
    one.placement = placed.ok() ? Status() : placed.status();
    if (!placed.ok()) {
      one.request = placed.status();
      continue;
    }
    one.endpoint = placed->endpoint;
    one.target = placed->target;
    one.workerId = placed->workerId;
    one.request = sendStart(one.endpoint, one.target, one.options, *one.spaces);
    one.deadline = std::chrono::steady_clock::now() + timeout;
  }
  return pending;
}

bool Client::startReady(const PendingStart& start) {
  if (!start.request.ok() || std::chrono::steady_clock::now() >= start.deadline) return true;
  return channelTo(start.endpoint).replyReady(*start.request);
}

Result<std::unique_ptr<Session>> Client::finishStart(PendingStart& one) {
  if (!one.spaces.ok()) return one.spaces.status();
  Result<std::unique_ptr<Session>> session =
      one.request.ok() ? awaitStart(one.endpoint, one.target, one.options, *one.spaces,
                                    *one.request, one.deadline)
                       : Result<std::unique_ptr<Session>>(one.request.status());
  // A start that met a lost worker, or a placement refused by a restarted
  // coordinator that forgot our experiment, goes the careful way, one at a
  // time, as startSession() retries it. (A benchmark a worker does not know
  // is the caller's, not the worker's, fault.)
  if (session.ok()) (*session)->workerId_ = one.workerId;
  const ErrorCode code = session.ok() ? ErrorCode::kOk : session.status().code();
  const bool workerLost =
      one.placement.ok() && code == ErrorCode::kDisconnected && channelTo(one.endpoint).peerLost();
  const bool placementForgotten = !one.placement.ok() && code == ErrorCode::kNotFound;
  if (workerLost || placementForgotten) {
    if (workerLost) noteLost(one.endpoint, one.workerId);
    session = startSession(one.options);
  }
  return session;
}

void Client::noteLost(const std::string& endpoint, std::uint64_t workerId) {
  if (workerId != 0) {
    lostWorkers_[workerId] = std::chrono::steady_clock::now();
  } else {
    lostEndpoints_[endpoint] = std::chrono::steady_clock::now();
  }
}

Status Client::timeoutMeansGone(const std::string& endpoint, Status status) {
  if (status.code() != ErrorCode::kTimeout) return status;
  // One short question: a slow coordinator must not double the wait.
  const Duration timeout = std::min<Duration>(options_.requestTimeout, std::chrono::seconds(5));
  capnp::MallocMessageBuilder builder(64);
  coordinator_->begin(builder, timeout).initRequest().initListCluster();
  auto listed = coordinator_->call(builder, timeout);
  if (!listed.ok()) return status;  // cannot tell: a timeout it stays
  for (auto worker : listed->envelope().getReply().getClusterView().getWorkers()) {
    if (endpoint == worker.getEndpoint().cStr()) return status;  // alive, only slow
  }
  noteLost(endpoint);
  channelTo(endpoint).markLost();
  return disconnected(
      fmt::format("{} (and the coordinator no longer lists it: its process is stuck or gone)",
                  status.message()));
}

Result<Client::Placed> Client::place(const std::string& sessionType, const std::string& benchmark,
                                     Duration timeout) {
  auto placed = placeOnce(sessionType, benchmark, timeout);
  auto reopen = opened_.find(options_.experiment);
  if (placed.ok() || placed.status().code() != ErrorCode::kNotFound || reopen == opened_.end()) {
    return placed;
  }
  // A restarted coordinator has forgotten our experiment: open it again; it
  // adopts the workers its hosts still run once they report them, so retry
  // while it says it has no ready worker yet.
  KILN_RETURN_IF_ERROR(openExperiment(reopen->second.spec).status());
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    placed = placeOnce(sessionType, benchmark, timeout);
    if (placed.ok() || placed.status().code() != ErrorCode::kOverloaded ||
        std::chrono::steady_clock::now() >= deadline) {
      return placed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<Client::Placed> Client::placeWaiting(const std::string& sessionType,
                                            const std::string& benchmark, TimePoint deadline,
                                            bool (*waitOn)(ErrorCode)) {
  Duration pause = std::chrono::milliseconds(100);
  for (;;) {
    const Duration left =
        std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
    auto placed = place(sessionType, benchmark, std::max<Duration>(left, std::chrono::seconds(1)));
    const auto now = std::chrono::steady_clock::now();
    if (placed.ok() || !waitOn(placed.status().code()) || now >= deadline) return placed;
    // The last try is at the deadline, not a pause before it.
    std::this_thread::sleep_for(std::min<Duration>(pause, deadline - now));
    pause = std::min<Duration>(2 * pause, std::chrono::seconds(1));
  }
}

void Client::dropDeadChannels() {
  std::erase_if(workers_, [this](const auto& entry) {
    // Asked first, of every channel: it reads the channel's connection
    // events, which must not pile up on one that nobody waits on.
    const bool lost = entry.second->peerLost();
    return lost && entry.second->outstanding() == 0 && !leases_->hasSessions(entry.first);
  });
}

void Client::abandon(const std::string& endpoint, std::uint64_t requestId) {
  auto channel = workers_.find(endpoint);
  if (channel != workers_.end()) channel->second->abandon(requestId);
}

void Client::beforePlacing() {
  dropDeadChannels();
  // The coordinator learns of a dead worker only after its liveness
  // timeout; until then, do not let it place us there again.
  auto now = std::chrono::steady_clock::now();
  auto old = [&](const auto& entry) { return now - entry.second > std::chrono::seconds(30); };
  std::erase_if(lostEndpoints_, old);
  std::erase_if(lostWorkers_, old);
}

Result<Client::Placed> Client::placeOnce(const std::string& sessionType,
                                         const std::string& benchmark, Duration timeout) {
  beforePlacing();
  KILN_ASSIGN_OR_RETURN(std::uint64_t request, sendPlace(sessionType, benchmark, timeout));
  return awaitPlace(request, std::chrono::steady_clock::now() + timeout);
}

Result<std::uint64_t> Client::sendPlace(const std::string& sessionType,
                                        const std::string& benchmark, Duration timeout) {
  capnp::MallocMessageBuilder builder(256);
  auto place = coordinator_->begin(builder, timeout).initRequest().initPlace();
  place.setSessionType(sessionType);
  place.setBenchmark(benchmark);
  auto avoid = place.initAvoid(lostEndpoints_.size());
  unsigned i = 0;
  for (const auto& [endpoint, when] : lostEndpoints_) avoid.set(i++, endpoint);
  auto avoidWorkers = place.initAvoidWorkers(lostWorkers_.size());
  i = 0;
  for (const auto& [worker, when] : lostWorkers_) avoidWorkers.set(i++, worker);
  return coordinator_->send(builder);
}

Result<Client::Placed> Client::awaitPlace(std::uint64_t request, TimePoint deadline) {
  KILN_ASSIGN_OR_RETURN(InboundMessage placed, coordinator_->await(request, deadline));
  auto placement = placed.envelope().getReply().getPlacement();
  std::string endpoint = placement.getEndpoint().cStr();
  noteRoute(endpoint, placement.getLocalEndpoint().cStr(), placement.getHostIdentity().cStr());
  auto pass = placement.getClientPass();
  notePass(endpoint, {reinterpret_cast<const char*>(pass.begin()), pass.size()});
  noteMessageLimit(endpoint, placement.getMaxMessageBytes());
  return Placed{std::move(endpoint), placement.getTarget(), placement.getWorkerId()};
}

void Client::notePass(const std::string& endpoint, std::string_view bytes) {
  if (bytes.size() != kClientPassBytes) return;  // none: the worker will not know us
  WorkerPass pass{id(), {}};
  std::copy(bytes.begin(), bytes.end(), pass.pass.begin());
  // A worker started again at the endpoint has a new key: the newest pass.
  identity_->passes[endpoint] = pass;
  leases_->setPass(endpoint, pass);
}

void Client::noteMessageLimit(const std::string& endpoint, std::uint64_t bytes) {
  // A worker started again at the endpoint may have another: the newest.
  messageLimits_[endpoint] = bytes;
  auto open = workers_.find(endpoint);
  if (open != workers_.end() && open->second) open->second->limitRequests(bytes);
}

Result<std::unique_ptr<Session>> Client::startSessionOn(const std::string& endpoint,
                                                        const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(SessionTypeSpaces spaces, getSpaces(options.sessionType));
  if (!identity_->passes.contains(endpoint) && !identity_->named.contains(endpoint)) {
    // Our pass there comes from the coordinator, as with any placement.
    capnp::MallocMessageBuilder builder(256);
    auto place = coordinator_->begin(builder, options_.requestTimeout).initRequest().initPlace();
    place.setSessionType(options.sessionType);
    place.setWorker(endpoint);
    KILN_ASSIGN_OR_RETURN(std::uint64_t request, coordinator_->send(builder));
    auto placed = awaitPlace(request, std::chrono::steady_clock::now() + options_.requestTimeout);
    if (placed.status().code() == ErrorCode::kNotFound) {
      // Not the coordinator's worker (standalone, or a relay): the user
      // chose it, and it can know us only by our secret.
      identity_->named.insert(endpoint);
      leases_->addNamed(endpoint);
    } else if (!placed.ok()) {
      return placed.status();
    }
  }
  return startOn(endpoint, 0, options, spaces);
}

Result<std::unique_ptr<Session>> Client::startOn(const std::string& endpoint, std::uint64_t target,
                                                 const SessionOptions& options,
                                                 const SessionTypeSpaces& spaces) {
  KILN_ASSIGN_OR_RETURN(std::uint64_t request, sendStart(endpoint, target, options, spaces));
  const Duration timeout = options.timeout.value_or(options_.requestTimeout);
  return awaitStart(endpoint, target, options, spaces, request,
                    std::chrono::steady_clock::now() + timeout);
}

Result<std::uint64_t> Client::sendStart(const std::string& endpoint, std::uint64_t target,
                                        const SessionOptions& options,
                                        const SessionTypeSpaces& spaces) {
  std::uint32_t actionSpace = 0;
  if (!options.actionSpace.empty()) {
    KILN_ASSIGN_OR_RETURN(std::size_t index, findSpace(spaces.actionSpaces, options.actionSpace));
    actionSpace = static_cast<std::uint32_t>(index);
  }
  KILN_ASSIGN_OR_RETURN(auto observations, observationIndices(spaces, options.observations));
  Duration timeout = options.timeout.value_or(options_.requestTimeout);
  Channel& channel = channelTo(endpoint);
  capnp::MallocMessageBuilder builder;
  auto start = channel.begin(builder, timeout, target).initRequest().initStartSession();
  start.setSessionType(options.sessionType);
  start.setActionSpace(actionSpace);
  auto benchmark = start.initBenchmark();
  benchmark.setUri(options.benchmark);
  if (options.program) {
    benchmark.setProgram(kj::arrayPtr(reinterpret_cast<const kj::byte*>(options.program->data()),
                                      options.program->size()));
  }
  auto wanted = start.initObservationSpaces(observations.size());
  for (unsigned i = 0; i < observations.size(); ++i) wanted.set(i, observations[i]);
  return channel.send(builder);
}

Result<std::unique_ptr<Session>> Client::awaitStart(const std::string& endpoint,
                                                    std::uint64_t target,
                                                    const SessionOptions& options,
                                                    const SessionTypeSpaces& spaces,
                                                    std::uint64_t request, TimePoint deadline) {
  auto reply = channelTo(endpoint).await(request, deadline);
  if (!reply.ok()) return timeoutMeansGone(endpoint, reply.status());
  auto started = reply->envelope().getReply().getSessionStarted();
  KILN_ASSIGN_OR_RETURN(auto initial, decodeValues(started.getObservations()));
  SessionHistory history{options, {}};
  leases_->addSession(endpoint);
  std::unique_ptr<Session> session(new Session(*this, endpoint, target,
                                               SessionId{started.getSessionId()}, spaces,
                                               std::move(history), std::move(initial)));
  session->startWorkerTime_ = wireMicros(started.getWorkerMicros());
  return session;
}

Result<std::string> Client::workerParameter(const std::string& endpoint, const std::string& key,
                                            const std::string& value) {
  Channel& channel = channelTo(endpoint);
  capnp::MallocMessageBuilder builder(256);
  auto parameter =
      channel.begin(builder, options_.requestTimeout).initRequest().initSendSessionParameter();
  parameter.setSessionId(0);
  parameter.setKey(key);
  parameter.setValue(value);
  KILN_ASSIGN_OR_RETURN(InboundMessage reply, channel.call(builder, options_.requestTimeout));
  return std::string(reply.envelope().getReply().getParameterReply().getReply().cStr());
}

}  // namespace kiln::client
