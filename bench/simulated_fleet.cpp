#include "bench/simulated_fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include <kiln/logging.h>
#include <kiln/version.h>
#include "common/base/wire_convert.h"
#include "common/transport/frame.h"
#include "common/transport/readiness_poll.h"
#include "common/types/underlying_wire.h"
#include "worker/coordinator_link.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;

// How often a loop looks at its hosts' sockets and timers: a heartbeat is
// late, and an answer to the coordinator slow, by at most this.
constexpr Duration kTickEvery = 20ms;

}  // namespace

struct SimulatedFleet::Host {
  unsigned index = 0;
  std::string endpoint;
  bool nesting = false;
  unsigned slots = 1;
  std::unique_ptr<CoordinatorLink> link;
  std::atomic<std::uint32_t> live{0};  // every session on the host, underlying ones too
  std::atomic<bool> silenced{false};
  std::atomic<bool> registered{false};
  std::atomic<int> registrations{0};
  // A nesting host's underlying workers and their sessions; its loop's only.
  std::map<std::uint64_t, UnderlyingStatus> underlying;
  std::uint64_t nextUnderlying = 1;
  // The link's socket descriptor, and its use count when the loop last
  // waited on it; the loop's only.
  int descriptor = -1;
  std::uint64_t usesAtLastWait = ~std::uint64_t{0};

  LoadReport report() const {
    LoadReport load;
    load.total.liveSessions = live.load();
    load.total.busySlots = std::min(load.total.liveSessions, slots);
    for (const auto& [id, status] : underlying) load.underlying.push_back(status);
    return load;
  }

  // createWorker and releaseWorker from the coordinator, as a nesting host
  // answers them (the sessions of a released worker end with it).
  void answer(InboundMessage message) {
    auto envelope = message.envelope();
    auto request = envelope.getRequest();
    capnp::MallocMessageBuilder builder(128);
    auto reply = initEnvelope(builder, envelope.getRequestId()).initReply();
    if (request.isCreateWorker()) {
      UnderlyingSpec spec = fromWire(request.getCreateWorker().getSpec());
      if (spec.workerId == 0) spec.workerId = (std::uint64_t{index} << 32) | nextUnderlying++;
      underlying.try_emplace(spec.workerId, UnderlyingStatus{spec, {}});
      reply.initWorkerCreated().setWorkerId(spec.workerId);
    } else if (request.isReleaseWorker()) {
      auto found = underlying.find(request.getReleaseWorker().getWorkerId());
      if (found == underlying.end()) {
        return link->sendReply(
            encodeErrorReply(envelope.getRequestId(), notFound("no such underlying worker")));
      }
      std::uint32_t ended = found->second.load.liveSessions;
      live.fetch_sub(std::min(ended, live.load()));
      underlying.erase(found);
      reply.initWorkerReleased().setSessionsEnded(ended);
    } else {
      return link->sendReply(encodeErrorReply(
          envelope.getRequestId(), unimplemented("a simulated host takes no such request")));
    }
    link->sendReply(encodeFrame(builder));
  }
};

struct SimulatedFleet::Loop {
  unsigned index = 0;
  std::vector<Host*> hosts;
  struct Change {
    Host* host;
    std::uint64_t target;
    int delta;
  };
  std::mutex mutex;
  std::vector<Change> changes;  // to underlying workers' counts, applied by the loop
  std::thread thread;
};

SimulatedFleet::SimulatedFleet(const FleetOptions& options) : options_(options) {}

Result<std::unique_ptr<SimulatedFleet>> SimulatedFleet::start(zmq::context_t& zmq,
                                                              const std::string& coordinator,
                                                              const FleetOptions& options) {
  if (options.hosts == 0 || options.nestingHosts > options.hosts || options.threads == 0 ||
      options.slots == 0) {
    return invalidArgument("a fleet needs hosts, slots and threads; nesting hosts <= hosts");
  }
  std::unique_ptr<SimulatedFleet> fleet(new SimulatedFleet(options));
  LinkTiming timing;
  timing.heartbeatInterval = options.heartbeatInterval;
  timing.liveness = options.liveness;
  timing.minBackoff = std::min<Duration>(options.heartbeatInterval, 1s);
  Logger quiet = makeNullLogger("sim-host");
  for (unsigned i = 0; i < options.hosts; ++i) {
    auto host = std::make_unique<Host>();
    host->index = i;
    host->nesting = i >= options.hosts - options.nestingHosts;
    host->slots = options.slots;
    // Addresses no one connects to: the bench never starts a session there.
    host->endpoint =
        fmt::format("tcp://10.{}.{}.{}:7000", (i >> 16) & 255, (i >> 8) & 255, i & 255);
    WorkerAdvert advert;
    advert.endpoint = host->endpoint;
    advert.slots = options.slots;
    advert.sessionTypes = {"llvm"};
    advert.version = kKilnVersion;
    advert.hostname = fmt::format("sim-host-{}", i);
    advert.pid = i + 1;
    advert.nesting = host->nesting;
    advert.token = options.token;
    Host* self = host.get();
    LinkRequestHandler onRequest;
    if (host->nesting) onRequest = [self](InboundMessage m) { self->answer(std::move(m)); };
    host->link = std::make_unique<CoordinatorLink>(zmq, coordinator, std::move(advert), timing,
                                                   fleet->clock_, quiet, std::move(onRequest));
    fleet->byEndpoint_[host->endpoint] = i;
    fleet->hosts_.push_back(std::move(host));
  }
  for (unsigned t = 0; t < options.threads; ++t) {
    fleet->loops_.push_back(std::make_unique<Loop>());
    fleet->loops_.back()->index = t;
  }
  for (unsigned i = 0; i < options.hosts; ++i) {
    fleet->loops_[i % options.threads]->hosts.push_back(fleet->hosts_[i].get());
  }
  for (auto& loop : fleet->loops_) {
    loop->thread = std::thread([f = fleet.get(), l = loop.get()] { f->run(*l); });
  }
  return fleet;
}

SimulatedFleet::~SimulatedFleet() {
  stopping_ = true;
  for (auto& loop : loops_) {
    if (loop->thread.joinable()) loop->thread.join();
  }
}

void SimulatedFleet::run(Loop& loop) {
  FrameLimits limits;
  // Loops start a share of a tick apart, so their work does not pile up on
  // the same instant.
  TimePoint nextTick = clock_.now() + kTickEvery * loop.index / loops_.size();
  ReadinessPoll poll;
  std::vector<Host*> polled;
  while (!stopping_.load()) {
    std::vector<Loop::Change> changes;
    {
      std::lock_guard lock(loop.mutex);
      changes.swap(loop.changes);
    }
    for (const Loop::Change& change : changes) {
      auto found = change.host->underlying.find(change.target);
      if (found == change.host->underlying.end()) continue;  // released meanwhile
      auto& count = found->second.load.liveSessions;
      count = change.delta > 0 ? count + 1 : (count > 0 ? count - 1 : 0);
      found->second.load.busySlots = std::min(count, change.host->slots);
    }
    poll.clear();
    polled.clear();
    for (Host* host : loop.hosts) {
      zmq::socket_t* socket = host->link->socket();
      if (socket == nullptr || host->silenced.load()) continue;
      const std::uint64_t uses = host->link->socketUses();
      if (host->descriptor < 0 || uses != host->usesAtLastWait) {
        host->descriptor = socket->get(zmq::sockopt::fd);
      }
      // Only a socket used since the last wait is asked before blocking: at
      // a thousand hosts, asking every one (as zmq_poll does) was most of
      // the fleet's CPU, in bursts that showed in the coordinator's p99.
      poll.addSocket(*socket, host->descriptor,
                     uses == host->usesAtLastWait ? SocketUse::kUntouched : SocketUse::kAny);
      polled.push_back(host);
    }
    // One look at every socket per tick, not a wake-up per message: the
    // fleet shares the machine with the coordinator it measures.
    std::this_thread::sleep_until(nextTick);
    poll.wait(std::chrono::milliseconds(0));
    for (Host* host : polled) host->usesAtLastWait = host->link->socketUses();
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (poll.ready(i)) polled[i]->link->onReadable(limits);
    }
    if (clock_.now() >= nextTick) {
      nextTick = clock_.now() + kTickEvery;
      for (Host* host : loop.hosts) {
        if (host->silenced.load()) continue;
        host->link->tick(host->report());
        host->registered = host->link->workerId().has_value();
        host->registrations = host->link->registrations();
      }
    }
  }
}

int SimulatedFleet::hostOf(const std::string& endpoint) const {
  auto found = byEndpoint_.find(endpoint);
  return found == byEndpoint_.end() ? -1 : static_cast<int>(found->second);
}

std::string SimulatedFleet::endpointOf(unsigned host) const { return hosts_.at(host)->endpoint; }

void SimulatedFleet::sessionStarted(unsigned host, std::uint64_t target) {
  Host& h = *hosts_.at(host);
  h.live.fetch_add(1);
  if (target == 0) return;
  Loop& loop = *loops_[host % loops_.size()];
  std::lock_guard lock(loop.mutex);
  loop.changes.push_back({&h, target, +1});
}

void SimulatedFleet::sessionEnded(unsigned host, std::uint64_t target) {
  Host& h = *hosts_.at(host);
  std::uint32_t live = h.live.load();
  while (live > 0 && !h.live.compare_exchange_weak(live, live - 1)) {
  }
  if (target == 0) return;
  Loop& loop = *loops_[host % loops_.size()];
  std::lock_guard lock(loop.mutex);
  loop.changes.push_back({&h, target, -1});
}

void SimulatedFleet::silence(unsigned host) { hosts_.at(host)->silenced = true; }

unsigned SimulatedFleet::registered() const {
  return static_cast<unsigned>(std::count_if(hosts_.begin(), hosts_.end(), [](const auto& h) {
    return !h->silenced.load() && h->registered.load();
  }));
}

std::uint64_t SimulatedFleet::registrations() const {
  std::uint64_t total = 0;
  for (const auto& host : hosts_) total += static_cast<std::uint64_t>(host->registrations.load());
  return total;
}

std::vector<int> SimulatedFleet::registrationsByHost() const {
  std::vector<int> counts;
  for (const auto& host : hosts_) {
    counts.push_back(host->silenced.load() ? -1 : host->registrations.load());
  }
  return counts;
}

std::uint64_t SimulatedFleet::liveSessions() const {
  std::uint64_t total = 0;
  for (const auto& host : hosts_) {
    if (!host->silenced.load()) total += host->live.load();
  }
  return total;
}

}  // namespace kiln::bench
