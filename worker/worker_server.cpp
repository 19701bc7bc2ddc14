#include "worker/worker_server.h"

#include <fmt/format.h>
#include <malloc.h>
#include <unistd.h>

#include <vector>

#include <kiln/version.h>
#include "common/base/spin_before_sleep.h"
#include "common/security/file_reader.h"
#include "common/security/worker_token.h"
#include "common/transport/local_transport.h"
#include "common/transport/readiness_poll.h"
#include "common/transport/router_io.h"
#include "common/transport/tcp_stream.h"
#include "common/transport/zmtp_heartbeat.h"
#include "worker/config_check.h"
#include "worker/damaged_exit.h"

namespace kiln {

// Replies go to the client's ROUTER route, or down the coordinator link for
// requests that came from there.
class WorkerServer::RouterSink final : public ReplySink {
 public:
  RouterSink(zmq::socket_t& router, std::uint64_t& routerUses,
             std::unique_ptr<CoordinatorLink>& link, std::unique_ptr<DirectChannels>& direct)
      : router_(router), routerUses_(routerUses), link_(link), direct_(direct) {}
  void send(const std::string& routingId, zmq::message_t frame) override {
    if (routingId == kCoordinatorRoute) {
      if (link_) link_->sendReply(std::move(frame));
      return;
    }
    if (DirectChannels::isDirectRoute(routingId)) {
      if (direct_) direct_->send(routingId, frame);
      return;
    }
    ++routerUses_;
    sendRouted(router_, routingId, std::move(frame));
  }

 private:
  zmq::socket_t& router_;
  std::uint64_t& routerUses_;
  std::unique_ptr<CoordinatorLink>& link_;
  std::unique_ptr<DirectChannels>& direct_;
};

namespace {

// Where requests can come from: the endpoints bound and the one advertised
// (clients may reach a loopback listener through a forwarded port it names).
// The same-host endpoint (automatic) and the direct channels are local.
std::vector<std::string> requestEndpoints(const WorkerConfig& c) {
  std::vector<std::string> endpoints{c.listen};
  if (!c.advertise.empty()) endpoints.push_back(c.advertise);
  if (!c.localListen.empty() && c.localListen != kAutoLocalListen) {
    endpoints.push_back(c.localListen);
  }
  return endpoints;
}

}  // namespace

WorkerServer::WorkerServer(WorkerConfig config, SessionTypeRegistry& types, zmq::context_t& zmq,
                           const Clock& clock, Logger logger)
    : config_(std::move(config)),
      types_(types),
      zmq_(zmq),
      clock_(clock),
      logger_(std::move(logger)),
      cache_(config_.cacheBytes, config_.evictionPolicy),
      router_(zmq, zmq::socket_type::router) {}

Result<std::unique_ptr<WorkerServer>> WorkerServer::create(WorkerConfig config,
                                                           SessionTypeRegistry& types,
                                                           zmq::context_t& zmq, const Clock& clock,
                                                           Logger logger) {
  KILN_RETURN_IF_ERROR(checkWorkerConfig(config));
  std::unique_ptr<WorkerServer> server(
      new WorkerServer(std::move(config), types, zmq, clock, std::move(logger)));
  WorkerConfig& c = server->config_;
  auto directory = WorkingDirectory::create(c.workingDirectoryBase, "kiln-worker");
  if (!directory.ok()) return directory.status();
  server->workingDirectory_.emplace(std::move(directory).value());

  server->router_.set(zmq::sockopt::linger, 0);
  applyZmtpHeartbeats(server->router_);
  server->router_.set(zmq::sockopt::sndhwm, 100000);
  server->router_.set(zmq::sockopt::rcvhwm, 100000);
  // Frames up to twice the limit get a clear error from decode; larger ones
  // are cut off by ZeroMQ before they are buffered, to protect memory.
  server->router_.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(2 * c.frames.maxMessageBytes));
  KILN_RETURN_IF_ERROR(
      secureServer(server->router_, c.security, c.mode.nesting ? "nesting host" : "worker"));
  try {
    server->router_.bind(c.listen);
  } catch (const zmq::error_t& e) {
    return invalidArgument(fmt::format("worker cannot listen on '{}': {}", c.listen, e.what()));
  }
  std::string bound = server->router_.get(zmq::sockopt::last_endpoint);
  server->endpoint_ = c.advertise.empty() ? bound : c.advertise;
  KILN_RETURN_IF_ERROR(server->bindLocalEndpoint());
  server->listenForDirectChannels();

  KILN_ASSIGN_OR_RETURN(FileAccess files, resolveFileAccess(c.allowFiles, requestEndpoints(c)));
  server->logger_->info("{} {}", c.mode.nesting ? "nesting host" : "worker",
                        describeFileAccess(files));
  server->resources_ = std::make_unique<ContextResources>(
      ContextResources{server->workingDirectory_->path(), server->cache_, server->logger_, clock,
                       c.limits.maxBenchmarkBytes, c.limits.compileMemoryBytes, std::move(files),
                       c.settings, c.limits.maxModuleDataBytes});
  Status started = types.start(*server->resources_);
  if (!started.ok()) return started;

  if (!c.metricsListen.empty()) {
    KILN_ASSIGN_OR_RETURN(server->observe_,
                          WorkerObservability::start(c.metricsListen, clock, server->logger_));
    c.limits.observer = server->observe_->observer();
  }
  // Passes are checked with a key of this process's own, which only its
  // coordinator learns: a pass captured here is good nowhere else, and one
  // captured elsewhere is none here (common/security/identity.h).
  c.limits.passKey = PassKey::draw();
  server->pool_ = std::make_unique<TaskPool>(c.slots, c.mode.makeQueue());
  server->sink_ = std::make_unique<RouterSink>(server->router_, server->routerUses_, server->link_,
                                               server->direct_);
  server->frontend_ = c.mode.makeFrontend(FrontendParts{
      types, server->cache_, c.limits, clock, *server->pool_, *server->sink_, server->completions_,
      server->logger_, server->workingDirectory_->path(), c.frames});
  if (!c.coordinator.empty()) {
    char hostname[256] = {};
    ::gethostname(hostname, sizeof(hostname) - 1);
    WorkerAdvert advert{server->endpoint_,
                        c.slots,
                        c.limits.maxSessions,
                        types.names(),
                        std::string("kiln ") + kKilnVersion,
                        hostname,
                        static_cast<std::uint32_t>(::getpid()),
                        c.mode.nesting,
                        server->localEndpoint_,
                        server->localEndpoint_.empty() ? "" : currentHostIdentity(),
                        c.registrationToken,
                        c.limits.passKey,
                        {}};
    advert.maxMessageBytes = c.frames.maxMessageBytes;
    if (!c.registrationTokenFile.empty()) {
      advert.reloadToken = [file = c.registrationTokenFile, token = c.registrationToken] {
        auto read = loadWorkerToken(file);
        return read.ok() ? *read : token;
      };
    }
    WorkerFrontend* frontend = server->frontend_.get();
    server->link_ = std::make_unique<CoordinatorLink>(
        zmq, c.coordinator, std::move(advert), c.link, clock, server->logger_,
        [frontend](InboundMessage message) {
          frontend->handle(kCoordinatorRoute, std::move(message));
        },
        c.security.keys);
  }
  server->logger_->info("worker serving {} on {}{}{} with {} slots (working directory {})",
                        fmt::join(types.names(), ", "), server->endpoint_,
                        server->localEndpoint_.empty() ? "" : " and ", server->localEndpoint_,
                        c.slots, server->workingDirectory_->path().string());
  return server;
}

Status WorkerServer::bindLocalEndpoint() {
  // Same socket as the TCP endpoint: one poll loop, and every socket option
  // (limits, security) applies to both transports alike.
  bool automatic = config_.localListen == kAutoLocalListen;
  std::string local =
      automatic ? defaultLocalEndpoint(config_.listen, static_cast<std::uint32_t>(::getpid()),
                                       RandomIds().next())
                : config_.localListen;
  if (local.empty()) return okStatus();
  if (local.rfind("ipc://", 0) != 0) {
    return invalidArgument(fmt::format(
        "the local endpoint '{}' is not an ipc:// endpoint (e.g. ipc://@kiln-worker-1)", local));
  }
  try {
    router_.bind(local);
  } catch (const zmq::error_t& e) {
    if (!automatic) {
      return invalidArgument(
          fmt::format("worker cannot listen on local endpoint '{}': {}", local, e.what()));
    }
    logger_->warn("no same-host endpoint ({}: {}); clients on this host use TCP", local, e.what());
    return okStatus();
  }
  localEndpoint_ = router_.get(zmq::sockopt::last_endpoint);
  return okStatus();
}

void WorkerServer::listenForDirectChannels() {
  // Offered by workers that serve their sessions themselves: a nesting
  // host's requests go on to its underlying workers.
  if (config_.mode.nesting) return;
  auto direct = std::make_unique<DirectChannels>(config_.frames, clock_, logger_);
  // To clients on this host: where they already have a same-host route.
  if (!localEndpoint_.empty()) {
    Status local =
        direct->listenLocal(fmt::format("kiln-direct-{}-{:016x}", ::getpid(), RandomIds().next()));
    if (!local.ok()) {
      logger_->warn("no direct channels for clients on this host: {}", local.message());
    }
  }
  // To clients on other hosts, on the interface they reach this worker at:
  // a raw stream is as plaintext as the cluster's ZeroMQ connections only
  // where the cluster has no key.
  const std::optional<TcpHostPort> tcp = splitTcpEndpoint(config_.listen);
  if (config_.directTcp.enabled && tcp && !config_.security.keys) {
    Status listening = direct->listenTcp(tcp->host, config_.directTcp.port);
    if (listening.ok()) {
      logger_->info("direct channels for clients on other hosts on {}", direct->tcpAddress());
    } else {
      logger_->warn("no direct channels for clients on other hosts (they use ZeroMQ): {}",
                    listening.message());
    }
  }
  if (direct->listening()) direct_ = std::move(direct);
}

void WorkerServer::deliver(const std::string& route, InboundMessage message) {
  ++delivered_;
  bool openDirect = false, acrossHosts = false;
  try {
    auto envelope = message.envelope();
    openDirect = envelope.isRequest() && envelope.getRequest().isOpenDirect();
    if (openDirect) acrossHosts = envelope.getRequest().getOpenDirect().getAcrossHosts();
  } catch (const kj::Exception&) {
    // A malformed request pointer: the frontend answers it with the reason.
    openDirect = false;
  }
  // Opening a direct channel stays possible while draining: a client takes
  // a refused one for a dead worker, and its replies still in flight on
  // the channel it shares with its other sessions would be given up.
  if (openDirect) return answerOpenDirect(route, message.envelope().getRequestId(), acrossHosts);
  if (drainWithinMs_.load(std::memory_order_relaxed) >= 0) {
    return refuseWhileDraining(route, message);
  }
  frontend_->handle(route, std::move(message));
}

void WorkerServer::answerOpenDirect(const std::string& route, std::uint64_t requestId,
                                    bool acrossHosts) {
  Result<DirectGrant> grant =
      direct_ ? direct_->grant(acrossHosts)
              : unimplemented(config_.mode.nesting ? "a nesting host offers no direct channel"
                                                   : "this worker offers no direct channel");
  if (!grant.ok()) return sink_->send(route, encodeErrorReply(requestId, grant.status()));
  capnp::MallocMessageBuilder builder(128);
  auto opened = initEnvelope(builder, requestId).initReply().initDirectOpened();
  opened.setAddress(grant->address);
  opened.setToken(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(grant->token.data()),
                                      grant->token.size()));
  sink_->send(route, encodeFrame(builder));
}

WorkerServer::~WorkerServer() { shutdown(); }

void WorkerServer::stop() {
  stopping_.store(true);
  completions_.wake();
}

void WorkerServer::drain(Duration within) {
  drainWithinMs_.store(std::max<std::int64_t>(0, toMillis(within)));
  completions_.wake();
}

void WorkerServer::refuseWhileDraining(const std::string& route, const InboundMessage& message) {
  std::uint64_t requestId = 0;
  try {
    requestId = message.envelope().getRequestId();
  } catch (const kj::Exception&) {
    return;  // nothing to answer it by
  }
  // 'disconnected': the client restores the session on another worker, as
  // it would after this worker's exit, without waiting for it.
  sink_->send(
      route, encodeErrorReply(requestId, disconnected(fmt::format(
                                             "this {} is stopping (the operator sent it SIGTERM or "
                                             "SIGINT) and takes no more requests: restore the "
                                             "session on another worker",
                                             config_.mode.nesting ? "nesting host" : "worker"))));
}

bool WorkerServer::drained(const LoadReport& load, bool stepsWaiting) {
  const std::int64_t within = drainWithinMs_.load();
  if (within < 0) return false;
  const std::uint32_t running = load.total.busySlots + load.total.queuedRequests;
  const bool idle = running == 0 && !stepsWaiting && pool_->idle();
  if (!drainUntil_) {
    drainUntil_ = clock_.now() + std::chrono::milliseconds(within);
    // Silent from now on, the worker is declared lost by its coordinator,
    // which then places no more sessions here.
    link_.reset();
    logger_->info(
        "stopping: refusing new requests; {} running or queued requests get up to {} ms "
        "(--drain-seconds) to be answered",
        running, within);
  }
  // Idle through one whole loop that read no request: what came meanwhile
  // (a request sent while a step ran inline) was refused with the reason.
  const bool quiet = delivered_ == deliveredAtDrainCheck_;
  deliveredAtDrainCheck_ = delivered_;
  if (idle && quiet) return true;
  if (clock_.now() < *drainUntil_) return false;
  logger_->warn(
      "stopping: {} requests still ran or waited after {} ms (--drain-seconds); they are "
      "answered if they end before the process must",
      running, within);
  return true;
}

void WorkerServer::readClients() {
  ++routerUses_;
  readRouted(router_, config_.frames, 4096,
             [this](const std::string& peer, InboundMessage m) { deliver(peer, std::move(m)); });
}

void WorkerServer::run() {
  std::vector<Completion> done;
  std::vector<LoopWait> waits;
  // Past the longest deadline any request may have, a busy thread is stuck.
  stuckAfter_ = config_.stuckTaskAfter > Duration::zero()
                    ? config_.stuckTaskAfter
                    : longestDeadline(config_.limits) + std::chrono::seconds(5);
  ReadinessPoll poll;
  // The ZeroMQ sockets' uses as of the last wait: a socket left alone since
  // needs no check before blocking (two system calls each, per iteration,
  // on the path of every step).
  std::optional<std::uint64_t> routerUsesAtWait;
  std::optional<std::uint64_t> linkUsesAtWait;
  SpinBeforeSleep replySpin = SpinBeforeSleep::forThisThread(config_.replySpin);
  std::uint64_t directRepliesAtWait = 0;
  FairQuickLooks quickLooks;
  const DirectChannels::Deliver deliverDirect = [this](const std::string& route, InboundMessage m) {
    deliver(route, std::move(m));
  };
  auto use = [](std::uint64_t uses, const std::optional<std::uint64_t>& atWait) {
    return atWait == uses ? SocketUse::kUntouched : SocketUse::kAny;
  };
  while (!stopping_.load()) {
    poll.clear();
    const std::size_t clients = poll.addSocket(router_, use(routerUses_, routerUsesAtWait));
    const std::size_t completions = poll.addFd(completions_.fd());
    zmq::socket_t* linkSocket = link_ ? link_->socket() : nullptr;
    const std::size_t link =
        linkSocket != nullptr
            ? poll.addSocket(*linkSocket, use(link_->socketUses(), linkUsesAtWait))
            : 0;
    zmq::socket_t* frontendSocket = frontend_->socket();
    const std::size_t frontend = frontendSocket != nullptr ? poll.addSocket(*frontendSocket) : 0;
    // Steps waiting for their compiler: their pipes are polled right here.
    const std::size_t firstWait = poll.size();
    waits.clear();
    frontend_->appendWaits(waits);
    for (const LoopWait& wait : waits) poll.addFd(wait.fd);
    if (direct_) direct_->addTo(poll);
    // After a reply on a direct channel the loop looks for that client's
    // next request for a moment before it sleeps (spin_before_sleep.h): by
    // reading that connection itself, one system call per look like a raw
    // socket's reader, with bounds on what other clients wait meanwhile
    // (FairQuickLooks).
    bool inputWaiting = false;   // a descriptor is ready: the wait must not block
    bool spinDelivered = false;  // a look read a request itself
    if (direct_ && direct_->repliesSent() != directRepliesAtWait) {
      directRepliesAtWait = direct_->repliesSent();
      const Duration spin = replySpin.next();
      if (spin > Duration::zero()) {
        const PollResult polled = pollFor(spin, [&] {
          if (quickLooks.pollEverythingNow() && poll.anyDescriptorReadyNow()) {
            return inputWaiting = true;
          }
          spinDelivered = direct_->readLastReplied(deliverDirect);
          return spinDelivered;
        });
        replySpin.outcome(polled == PollResult::kArrived);
      }
    }
    if (quickLooks.mustWait(spinDelivered)) {
      poll.wait(std::chrono::milliseconds(inputWaiting || spinDelivered ? 0 : 50));
      routerUsesAtWait = routerUses_;
      linkUsesAtWait = link_ ? std::optional(link_->socketUses()) : std::nullopt;
    }
    if (frontendSocket != nullptr && poll.ready(frontend)) frontend_->onSocketReadable();
    for (std::size_t i = 0; i < waits.size(); ++i) {
      // Readable, or a hang-up: either way the session looks.
      if (poll.ready(firstWait + i)) frontend_->onWaitReady(waits[i]);
    }

    if (direct_) direct_->onReady(poll, deliverDirect);
    if (poll.ready(clients)) readClients();
    if (poll.ready(completions)) {
      completions_.drain(done);
      for (Completion& completion : done) frontend_->onCompletion(std::move(completion));
      done.clear();
      if (stopForDamage()) return finishDamaged();
    }
    if (linkSocket != nullptr && poll.ready(link)) link_->onReadable(config_.frames);
    frontend_->tick();
    reportStuck(pool_->replaceStuck(stuckAfter_));
    LoadReport load = frontend_->load();
    if (drained(load, !waits.empty())) break;
    returnFreedMemory(load.total.liveSessions);
    if (link_) {
      link_->tick(load);
      dropSessionsIfCutOff();
    }
    if (observe_ && observe_->due()) {
      observe_->metrics().update(WorkerLoadSample{std::move(load), config_.slots, cache_.counters(),
                                                  link_ ? link_->registrations() : 0});
    }
  }
  shutdown();
}

void WorkerServer::dropSessionsIfCutOff() {
  const std::optional<TimePoint> since = link_->cutOffSince();
  if (!since || droppedForCutOffAt_ == since) return;  // once per cut
  droppedForCutOffAt_ = since;
  frontend_->dropSessionsOfClientsSilentSince(
      *since,
      fmt::format("this worker had heard neither from its coordinator nor from the session's "
                  "client for {} ms: the coordinator declares such a worker lost, and the client "
                  "restores its sessions on another worker",
                  toMillis(clock_.now() - *since)));
}

void WorkerServer::reportStuck(const StuckThreads& stuck) {
  if (stuck.replaced != 0) {
    logger_->warn(
        "replaced {} compile threads busy for over {} ms in steps that ignore cancellation; {} "
        "replaced threads still run (at most {})",
        stuck.replaced, toMillis(stuckAfter_), pool_->stuck(), pool_->maxWrittenOff());
  }
  // Once per episode: the note stays true on every loop until a step returns.
  if (stuck.held != 0 && !stuckReported_) logger_->error("{}", describeStuck(*pool_));
  stuckReported_ = stuck.held != 0;
}

void WorkerServer::finishDamaged() {
  answerRunningBeforeExit(*pool_, completions_, [this](Completion completion) {
    frontend_->onCompletion(std::move(completion));
  });
  // The answers leave when the ZeroMQ context is closed (serveWorker), up to
  // the linger; the link says nothing more to the coordinator, which stops
  // listing this worker when its heartbeats stop.
  if (direct_) direct_->flushAll(std::chrono::seconds(2));
  router_.set(zmq::sockopt::linger, 2000);
  router_.close();
  link_.reset();
  // Compilers die with the process (PR_SET_PDEATHSIG); their files go now.
  workingDirectory_.reset();
  shutDown_ = true;  // nothing else is cleaned up: the process exits next
}

bool WorkerServer::stopForDamage() {
  if (damage_ || damageWarned_) return damage_.has_value();
  std::optional<std::string> damage = types_.damage();
  if (!damage) return false;
  if (!config_.exitWhenDamaged) {
    damageWarned_ = true;
    logger_->warn(
        "compile work crashed inside this process ({}); its memory may be damaged, but this "
        "worker shares its process and cannot be restarted: it keeps serving",
        *damage);
    return false;
  }
  damage_ = std::move(damage);
  logger_->error(
      "compile work crashed inside this process ({}); its memory may be damaged: finishing the "
      "running requests and exiting to be restarted",
      *damage_);
  return true;
}

void WorkerServer::returnFreedMemory(std::uint32_t liveSessions) {
  // glibc keeps freed heap pages; after thousands of sessions end, hand them
  // back so that an idle worker's RSS returns near its idle size.
  constexpr std::uint32_t kTrimAfterFreed = 1000;
  peakSessions_ = std::max(peakSessions_, liveSessions);
  if (peakSessions_ - liveSessions >= kTrimAfterFreed) {
    ::malloc_trim(0);
    peakSessions_ = liveSessions;
  }
}

void WorkerServer::shutdown() {
  if (shutDown_) return;
  shutDown_ = true;
  pool_.reset();  // finishes running tasks
  if (frontend_) {
    std::vector<Completion> done;
    completions_.drain(done);
    for (Completion& completion : done) frontend_->onCompletion(std::move(completion));
    // A clean stop: the frontend's own processes get what is left of it.
    if (drainUntil_) {
      frontend_->stopCleanly(std::max(Duration::zero(), *drainUntil_ - clock_.now()));
    }
    frontend_->clear();
  }
  link_.reset();
  if (drainUntil_) {
    // A drain promised answers (and refusals with their reason): they
    // leave before the sockets close, up to the linger.
    if (direct_) direct_->flushAll(std::chrono::seconds(2));
    router_.set(zmq::sockopt::linger, 2000);
  }
  direct_.reset();
  Status stopped = types_.shutdown();
  if (!stopped.ok()) logger_->error("context shutdown failed: {}", stopped.toString());
  router_.close();
  workingDirectory_.reset();
  observe_.reset();  // after the hosts that call its hooks are gone
}

}  // namespace kiln
