#include "tests/client/fake_cluster.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>

#include "common/base/wire_convert.h"
#include "common/transport/frame.h"

namespace kiln::fake {
namespace {

std::string bytesOf(const zmq::message_t& frame) {
  return std::string(static_cast<const char*>(frame.data()), frame.size());
}

template <class Fill>
std::string replyTo(std::uint64_t requestId, Fill fill) {
  capnp::MallocMessageBuilder builder;
  fill(initEnvelope(builder, requestId).initReply());
  return bytesOf(encodeFrame(builder));
}

std::string errorTo(std::uint64_t requestId, const Status& status) {
  return bytesOf(encodeErrorReply(requestId, status));
}

constexpr const char* kReplayable = "counter";
constexpr const char* kNotReplayable = "plain";
enum Observation : std::uint32_t { kState = 0, kSteps = 1 };

void fillSpaces(const std::string& type, wire::Spaces::Builder spaces) {
  toWire(Space::discrete("inc", 100), spaces.initActionSpaces(1)[0]);
  auto observations = spaces.initObservationSpaces(2);
  toWire(Space::int64Scalar("state", Int64Range{INT64_MIN, INT64_MAX}), observations[kState]);
  toWire(Space::int64Scalar("steps", Int64Range{0, INT64_MAX}), observations[kSteps]);
  const bool replayable = type == kReplayable;
  spaces.initReplay().setDeterministic(replayable);
  if (replayable) spaces.getReplay().setFingerprint("state");
}

std::int64_t stepsIn(const std::vector<std::string>& events) {
  return std::count_if(events.begin(), events.end(),
                       [](const std::string& e) { return e.find('=') == std::string::npos; });
}

}  // namespace

std::int64_t FakeWorker::stateAfter(const std::vector<std::string>& events, std::int64_t salt) {
  std::uint64_t state = 14695981039346656037ull;  // FNV-1a over the events, in order
  for (const std::string& event : events) {
    for (char c : event + ';') state = (state ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  return static_cast<std::int64_t>(state) + salt;
}

std::optional<std::string> FakeWorker::answer(wire::Envelope::Reader envelope) {
  const std::uint64_t id = envelope.getRequestId();
  auto request = envelope.getRequest();
  auto observe = [&](const SessionState& session, capnp::List<std::uint32_t>::Reader wanted,
                     capnp::List<wire::Value>::Builder out) {
    for (unsigned i = 0; i < wanted.size(); ++i) {
      Value value = wanted[i] == kState ? Value(stateAfter(session.events, session.salt))
                                        : Value(stepsIn(session.events));
      toWire(value, out[i]);
    }
  };
  auto sessionOf = [&](std::uint64_t sessionId) -> SessionState* {
    auto found = sessions_.find(sessionId);
    return found == sessions_.end() ? nullptr : &found->second;
  };
  auto noSession = [&](std::uint64_t sessionId) {
    return errorTo(id, notFound(fmt::format("no session {:x} here", sessionId)));
  };
  std::string line;
  std::optional<std::string> reply;
  switch (request.which()) {
    case wire::Request::GET_SPACES: {
      std::string type = request.getGetSpaces().getSessionType().cStr();
      reply = replyTo(id, [&](auto r) { fillSpaces(type, r.initSpaces()); });
      break;
    }
    case wire::Request::START_SESSION: {
      auto start = request.getStartSession();
      std::string type = start.getSessionType().cStr();
      line = fmt::format("start {}", start.getBenchmark().getUri().cStr());
      if (type != kReplayable && type != kNotReplayable) {
        reply = errorTo(id, notFound(fmt::format("no session type '{}'", type)));
        break;
      }
      SessionState session{type, {}, 0};
      if (saltedSessions != 0) {
        session.salt = salt;
        if (saltedSessions > 0) --saltedSessions;
      }
      const std::uint64_t sessionId = nextSessionId_++;
      sessions_[sessionId] = session;
      reply = replyTo(id, [&](auto r) {
        auto started = r.initSessionStarted();
        started.setSessionId(sessionId);
        observe(session, start.getObservationSpaces(),
                started.initObservations(start.getObservationSpaces().size()));
      });
      break;
    }
    case wire::Request::STEP: {
      auto step = request.getStep();
      std::vector<std::string> actions;
      for (auto action : step.getActions()) {
        auto value = fromWire(action);
        actions.push_back(value.ok() && value->is<std::int64_t>()
                              ? std::to_string(value->as<std::int64_t>())
                              : std::string("?"));
      }
      line = fmt::format("step {}", fmt::join(actions, ","));
      SessionState* session = sessionOf(step.getSessionId());
      if (!session) {
        reply = noSession(step.getSessionId());
        break;
      }
      if (refuse &&
          std::find(actions.begin(), actions.end(), std::to_string(*refuse)) != actions.end()) {
        // Like a compile error in a real worker: the session is over.
        sessions_.erase(step.getSessionId());
        reply = errorTo(id, compileError(fmt::format("the compiler refused action {}", *refuse)));
        break;
      }
      session->events.insert(session->events.end(), actions.begin(), actions.end());
      reply = replyTo(id, [&](auto r) {
        auto stepped = r.initStepped();
        stepped.setActionsApplied(static_cast<std::uint32_t>(actions.size()));
        observe(*session, step.getObservationSpaces(),
                stepped.initObservations(step.getObservationSpaces().size()));
      });
      break;
    }
    case wire::Request::SEND_SESSION_PARAMETER: {
      auto parameter = request.getSendSessionParameter();
      std::string event =
          fmt::format("{}={}", parameter.getKey().cStr(), parameter.getValue().cStr());
      line = "param " + event;
      SessionState* session = sessionOf(parameter.getSessionId());
      if (!session) {
        reply = noSession(parameter.getSessionId());
        break;
      }
      session->events.push_back(event);
      reply = replyTo(id, [&](auto r) { r.initParameterReply().setReply("ok"); });
      break;
    }
    case wire::Request::FORK: {
      const std::uint64_t parent = request.getFork().getSessionId();
      line = "fork";
      SessionState* session = sessionOf(parent);
      if (!session) {
        reply = noSession(parent);
        break;
      }
      const std::uint64_t child = nextSessionId_++;
      sessions_[child] = *session;
      reply = replyTo(id, [&](auto r) { r.initForked().setSessionId(child); });
      break;
    }
    case wire::Request::END_SESSION: {
      line = "end";
      const bool known = sessions_.erase(request.getEndSession().getSessionId()) != 0;
      reply = known ? replyTo(id, [&](auto r) { r.initEnded().setRemainingSessions(0); })
                    : noSession(request.getEndSession().getSessionId());
      break;
    }
    case wire::Request::KEEP_ALIVE:
      return replyTo(id, [](auto r) { r.setKeptAlive(); });
    default:
      line = "other";
      reply = errorTo(id, invalidArgument("the fake worker does not take this request"));
  }
  if (!line.empty()) log.push_back(line);  // spaces are no session's business
  if (!answering) return std::nullopt;
  return reply;
}

std::optional<std::string> FakeCoordinator::answer(wire::Envelope::Reader envelope) {
  const std::uint64_t id = envelope.getRequestId();
  auto request = envelope.getRequest();
  const auto listed = [&] {
    std::vector<std::string> endpoints;
    for (const std::string& endpoint : cluster_.workerEndpoints()) {
      if (!delisted.contains(endpoint)) endpoints.push_back(endpoint);
    }
    return endpoints;
  };
  switch (request.which()) {
    case wire::Request::LIST_CLUSTER: {
      log.push_back("list");
      const auto endpoints = listed();
      return replyTo(id, [&](auto r) {
        auto workers = r.initClusterView().initWorkers(endpoints.size());
        for (unsigned i = 0; i < endpoints.size(); ++i) {
          workers[i].setWorkerId(i + 1);
          workers[i].setEndpoint(endpoints[i]);
          workers[i].setSlots(1);
          auto types = workers[i].initSessionTypes(2);
          types.set(0, kReplayable);
          types.set(1, kNotReplayable);
        }
      });
    }
    case wire::Request::PLACE: {
      auto place = request.getPlace();
      std::vector<std::string> avoid;
      for (auto endpoint : place.getAvoid()) avoid.emplace_back(endpoint.cStr());
      log.push_back("place");
      avoided.push_back(avoid);
      std::vector<std::string> candidates;
      for (const std::string& endpoint : listed()) {
        FakeServer* server = cluster_.find(endpoint);
        if (server && server->alive &&
            std::find(avoid.begin(), avoid.end(), endpoint) == avoid.end()) {
          candidates.push_back(endpoint);
        }
      }
      if (placeAt) candidates = {*placeAt};
      if (fullFor > 0) {
        --fullFor;
        candidates.clear();
      }
      if (candidates.empty()) {
        return errorTo(id, overloaded(fmt::format("no ready worker hosts '{}'",
                                                  place.getSessionType().cStr())));
      }
      const std::string chosen = candidates[nextPlacement_++ % candidates.size()];
      return replyTo(id, [&](auto r) { r.initPlacement().setEndpoint(chosen); });
    }
    case wire::Request::KEEP_ALIVE:
      return replyTo(id, [](auto r) { r.setKeptAlive(); });
    default:
      log.push_back("other");
      return errorTo(id, invalidArgument("the fake coordinator does not take this request"));
  }
}

namespace {

// A channel to a fake server: send() hands the request to the server at
// once; await() takes what it answered, in order. Nothing ever waits: a
// server that did not answer is a timeout, one that died a lost connection.
class FakeChannel final : public Channel {
 public:
  FakeChannel(FakeCluster& cluster, std::string endpoint, const RequestIdentity& identity,
              FrameLimits limits)
      : Channel(std::move(endpoint), identity, limits), cluster_(cluster), limits_(limits) {}

  Result<std::uint64_t> send(capnp::MessageBuilder& builder) override {
    FakeServer* server = cluster_.find(endpoint());
    if (lost_ || !server || !server->alive) {
      lost_ = true;
      return disconnected(fmt::format("cannot send to {}: it is gone", endpoint()));
    }
    // Through the same bytes and checks a server's socket reader applies.
    const std::string request = bytesOf(encodeFrame(builder));
    KILN_ASSIGN_OR_RETURN(InboundMessage decoded,
                          InboundMessage::decode(request.data(), request.size(), limits_));
    const std::uint64_t id = decoded.envelope().getRequestId();
    expect(id);
    if (auto reply = server->answer(decoded.envelope())) inbox_.push_back(std::move(*reply));
    return id;
  }

  Result<InboundMessage> await(std::uint64_t requestId, TimePoint) override {
    if (auto early = takeArrived(requestId)) return std::move(*early);
    if (!isPending(requestId)) {
      return invalidArgument(fmt::format("request {} is not outstanding", requestId));
    }
    while (!inbox_.empty()) {
      std::string frame = std::move(inbox_.front());
      inbox_.pop_front();
      if (auto reply = take(frame.data(), frame.size(), requestId)) return std::move(*reply);
    }
    forget(requestId);
    if (peerLost()) {
      return disconnected(fmt::format("the connection to {} dropped", endpoint()));
    }
    return timeoutError(fmt::format("{} did not answer in time", endpoint()));
  }

  bool peerLost() override {
    FakeServer* server = cluster_.find(endpoint());
    if (!server || !server->alive) lost_ = true;
    return lost_;
  }
  void markLost() override { lost_ = true; }
  std::string connectedAddress() override { return endpoint(); }

 private:
  FakeCluster& cluster_;
  FrameLimits limits_;
  std::deque<std::string> inbox_;  // replies in the order they were sent
  bool lost_ = false;
};

class FakeKeepAlives final : public KeepAliveSender {
 public:
  explicit FakeKeepAlives(FakeCluster& cluster) : cluster_(cluster) {}
  void ping(const std::vector<std::string>& workers, const std::string& coordinator,
            const RequestIdentity&) override {
    std::vector<std::string> endpoints = workers;
    if (!coordinator.empty()) endpoints.push_back(coordinator);
    cluster_.recordKeepAlive(endpoints);
  }

 private:
  FakeCluster& cluster_;
};

class FakeChannels final : public ChannelFactory {
 public:
  explicit FakeChannels(FakeCluster& cluster) : cluster_(cluster) {}
  Result<std::unique_ptr<Channel>> open(const std::string& endpoint, const std::string&,
                                        const RequestIdentity& identity,
                                        const FrameLimits& limits) override {
    if (!endpoint.starts_with("tcp://")) {
      return invalidArgument(fmt::format("'{}' is not a tcp:// address", endpoint));
    }
    return std::unique_ptr<Channel>(
        std::make_unique<FakeChannel>(cluster_, endpoint, identity, limits));
  }
  std::unique_ptr<KeepAliveSender> keepAliveSender() override {
    return std::make_unique<FakeKeepAlives>(cluster_);
  }

 private:
  FakeCluster& cluster_;
};

}  // namespace

FakeCluster::FakeCluster() {
  auto coordinator = std::make_unique<FakeCoordinator>(*this);
  coordinator_ = coordinator.get();
  servers_[kCoordinator] = std::move(coordinator);
}

FakeWorker& FakeCluster::addWorker(const std::string& endpoint) {
  auto worker = std::make_unique<FakeWorker>();
  FakeWorker& added = *worker;
  servers_[endpoint] = std::move(worker);
  order_.push_back(endpoint);
  return added;
}

FakeWorker& FakeCluster::worker(const std::string& endpoint) {
  return dynamic_cast<FakeWorker&>(*servers_.at(endpoint));
}

FakeServer* FakeCluster::find(const std::string& endpoint) {
  auto found = servers_.find(endpoint);
  return found == servers_.end() ? nullptr : found->second.get();
}

std::unique_ptr<ChannelFactory> FakeCluster::channels() {
  return std::make_unique<FakeChannels>(*this);
}

std::vector<std::vector<std::string>> FakeCluster::keepAlives() {
  std::lock_guard lock(keepAliveMutex_);
  return keepAlives_;
}

void FakeCluster::recordKeepAlive(std::vector<std::string> endpoints) {
  std::lock_guard lock(keepAliveMutex_);
  keepAlives_.push_back(std::move(endpoints));
}

}  // namespace kiln::fake
