#include "tools/agent_tools/tool_executor.h"

#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "tools/agent_tools/caller_lane.h"
#include "tools/agent_tools/lane_choice.h"
#include "tools/agent_tools/tool_arguments.h"
#include "tools/agent_tools/tool_error.h"
#include "tools/agent_tools/tool_schema.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::agent_tools {
namespace {

using nlohmann::json;

// A caller's lanes (caller_lane.h) and which of them holds each episode.
struct Caller {
  std::atomic<std::size_t> inFlight{0};
  std::mutex mutex;                                // lanes' slots and episodeLanes
  std::vector<std::unique_ptr<CallerLane>> lanes;  // maxConcurrentCallsPerCaller slots
  std::map<std::string, CallerLane*> episodeLanes;
  std::size_t episodesReserved = 0;  // places taken by calls opening an episode
};

// A place reserve()d for an episode, given back when the call ends: in the
// same lock that keeps the episode (releaseLocked), or on any early return.
struct EpisodePlace {
  Caller* caller = nullptr;
  EpisodePlace() = default;
  EpisodePlace(const EpisodePlace&) = delete;
  EpisodePlace& operator=(const EpisodePlace&) = delete;
  // caller->mutex held.
  void releaseLocked() {
    if (caller != nullptr) --caller->episodesReserved;
    caller = nullptr;
  }
  ~EpisodePlace() {
    if (caller == nullptr) return;
    std::lock_guard lock(caller->mutex);
    releaseLocked();
  }
};

// Counts a call in flight for its caller while it runs.
class InFlight {
 public:
  explicit InFlight(Caller& caller) : caller_(caller) { caller_.inFlight.fetch_add(1); }
  ~InFlight() { caller_.inFlight.fetch_sub(1); }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  Caller& caller_;
};

std::string answerText(const ToolAnswer& answer) {
  if (const auto* failure = std::get_if<ToolFailure>(&answer)) return errorJson(*failure);
  return std::get<json>(answer).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

struct ToolExecutor::State {
  ExecutorOptions options;
  std::unique_ptr<LocalCluster> cluster;  // the embedded one; null with a coordinator
  ToolSpaces spaces;
  std::string schema;
  std::string results;
  LaneCounters counters;
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> passesAsked{0};
  std::atomic<std::uint64_t> nextEpisode{1};
  std::mutex callersMutex;
  std::map<CallerId, std::shared_ptr<Caller>> callers;

  std::variant<std::shared_ptr<Caller>, ToolFailure> callerFor(const CallerId& id);
  // A free lane of `caller` (made if need be), locked in `lock`: the free
  // one holding the longest cached prefix of the request's pass list
  // (lane_choice.h), else any free one.
  std::variant<CallerLane*, ToolFailure> laneFor(Caller& caller, const ToolRequest& request,
                                                 std::unique_lock<std::mutex>& lock);
  std::variant<CallerLane*, ToolFailure> laneAt(Caller& caller, std::size_t slot);
  ToolAnswer run(Caller& caller, const ToolRequest& request);
  ToolAnswer runOnEpisode(Caller& caller, const ToolRequest& request);
  // Takes a place for one more episode of `caller`, or says why there is
  // none; an EpisodePlace gives it back.
  std::optional<ToolFailure> reserveEpisode(Caller& caller);
};

std::variant<std::shared_ptr<Caller>, ToolFailure> ToolExecutor::State::callerFor(
    const CallerId& id) {
  if (id.empty()) return ToolFailure{ToolError::kInvalidArguments, "the caller id is empty"};
  std::lock_guard lock(callersMutex);
  auto it = callers.find(id);
  if (it != callers.end()) return it->second;
  if (callers.size() >= options.limits.maxCallers) {
    return ToolFailure{ToolError::kQuotaExceeded,
                       fmt::format("{} callers hold state already (ToolLimits::maxCallers): "
                                   "retry later",
                                   callers.size())};
  }
  auto caller = std::make_shared<Caller>();
  caller->lanes.resize(std::max<std::size_t>(options.limits.maxConcurrentCallsPerCaller, 1));
  callers.emplace(id, caller);
  return caller;
}

std::variant<CallerLane*, ToolFailure> ToolExecutor::State::laneAt(Caller& caller,
                                                                   std::size_t slot) {
  std::lock_guard lock(caller.mutex);
  if (caller.lanes[slot] == nullptr) {
    client::ClientOptions clientOptions = options.client;
    if (cluster) clientOptions.coordinator = cluster->coordinatorEndpoint();
    auto client = client::Client::connect(clientOptions);
    if (!client.ok()) {
      return ToolFailure{ToolError::kUnavailable,
                         "cannot reach the cluster: " + client.status().toString()};
    }
    caller.lanes[slot] = std::make_unique<CallerLane>(std::move(*client), options.limits, counters);
  }
  return caller.lanes[slot].get();
}

std::variant<CallerLane*, ToolFailure> ToolExecutor::State::laneFor(
    Caller& caller, const ToolRequest& request, std::unique_lock<std::mutex>& lock) {
  const std::size_t slots = caller.lanes.size();
  std::vector<std::ptrdiff_t> cached(slots, -1);
  {
    std::lock_guard callerLock(caller.mutex);
    for (std::size_t i = 0; i < slots; ++i) {
      if (caller.lanes[i] != nullptr) {
        cached[i] = caller.lanes[i]->cachedPrefix(request.state.benchmark, request.state.passes);
      }
    }
  }
  const std::vector<std::size_t> order =
      laneOrder(cached, std::hash<std::string>{}(request.state.benchmark) % slots);
  for (std::size_t slot : order) {
    auto lane = laneAt(caller, slot);
    if (auto* failure = std::get_if<ToolFailure>(&lane)) return *failure;
    std::unique_lock<std::mutex> attempt(std::get<CallerLane*>(lane)->mutex(), std::try_to_lock);
    if (attempt.owns_lock()) {
      lock = std::move(attempt);
      return lane;
    }
  }
  // Every lane is busy (episode calls hold some): wait for the best one.
  auto lane = laneAt(caller, order.front());
  if (auto* failure = std::get_if<ToolFailure>(&lane)) return *failure;
  lock = std::unique_lock<std::mutex>(std::get<CallerLane*>(lane)->mutex());
  return lane;
}

std::optional<ToolFailure> ToolExecutor::State::reserveEpisode(Caller& caller) {
  {
    std::lock_guard lock(caller.mutex);
    const std::size_t taken = caller.episodeLanes.size() + caller.episodesReserved;
    if (taken >= options.limits.maxEpisodesPerCaller) {
      return ToolFailure{ToolError::kQuotaExceeded,
                         fmt::format("{} episodes open or opening, the limit "
                                     "(ToolLimits::maxEpisodesPerCaller): end some with "
                                     "end_episode",
                                     taken)};
    }
    // Checked and taken under one lock: two calls cannot both take the last place.
    ++caller.episodesReserved;
  }
  if (options.afterEpisodeReserved) options.afterEpisodeReserved();
  return std::nullopt;
}

ToolAnswer ToolExecutor::State::runOnEpisode(Caller& caller, const ToolRequest& request) {
  const std::string& handle = request.state.episode;
  CallerLane* lane = nullptr;
  {
    std::lock_guard lock(caller.mutex);
    auto it = caller.episodeLanes.find(handle);
    if (it != caller.episodeLanes.end()) lane = it->second;
  }
  if (lane == nullptr) {
    return ToolFailure{ToolError::kUnknownEpisode,
                       fmt::format("no open episode '{}' of yours", handle)};
  }
  const bool forks = request.tool == kForkEpisode;
  EpisodePlace place;
  if (forks) {
    if (auto failure = reserveEpisode(caller)) return *failure;
    place.caller = &caller;
  }
  const std::string newHandle = fmt::format("ep-{}", nextEpisode.fetch_add(1));
  std::lock_guard laneLock(lane->mutex());
  ToolAnswer answer = [&]() -> ToolAnswer {
    if (request.tool == kApplyPasses) return lane->applyPasses(request, newHandle);
    if (request.tool == kObserve) return lane->observe(request);
    if (request.tool == kIrText) return lane->irText(request);
    if (request.tool == kValidate) return lane->validate(request);
    if (request.tool == kCompareBaselines) return lane->compareBaselines(request);
    if (forks) return lane->forkEpisode(handle, newHandle);
    return lane->endEpisode(handle);
  }();
  lane->publishKeys();
  std::lock_guard lock(caller.mutex);
  if (!lane->hasEpisode(handle)) caller.episodeLanes.erase(handle);
  if (forks && lane->hasEpisode(newHandle)) caller.episodeLanes[newHandle] = lane;
  place.releaseLocked();
  return answer;
}

ToolAnswer ToolExecutor::State::run(Caller& caller, const ToolRequest& request) {
  if (!request.state.episode.empty()) return runOnEpisode(caller, request);
  EpisodePlace place;
  if (request.keepEpisode) {
    if (auto failure = reserveEpisode(caller)) return *failure;
    place.caller = &caller;
  }
  std::unique_lock<std::mutex> laneLock;
  auto chosen = laneFor(caller, request, laneLock);
  if (auto* failure = std::get_if<ToolFailure>(&chosen)) return *failure;
  CallerLane& lane = *std::get<CallerLane*>(chosen);
  const std::string newHandle = fmt::format("ep-{}", nextEpisode.fetch_add(1));
  ToolAnswer answer = [&]() -> ToolAnswer {
    if (request.tool == kApplyPasses) return lane.applyPasses(request, newHandle);
    if (request.tool == kObserve) return lane.observe(request);
    if (request.tool == kIrText) return lane.irText(request);
    if (request.tool == kValidate) return lane.validate(request);
    return lane.compareBaselines(request);
  }();
  lane.publishKeys();
  if (request.keepEpisode) {
    // The episode takes its reserved place in the same lock.
    std::lock_guard lock(caller.mutex);
    if (lane.hasEpisode(newHandle)) caller.episodeLanes[newHandle] = &lane;
    place.releaseLocked();
  }
  return answer;
}

ToolExecutor::ToolExecutor(std::unique_ptr<State> state) : state_(std::move(state)) {}

ToolExecutor::~ToolExecutor() {
  // Sessions end before their clients, clients before the cluster.
  std::lock_guard lock(state_->callersMutex);
  state_->callers.clear();
}

Result<std::unique_ptr<ToolExecutor>> ToolExecutor::create(ExecutorOptions options) {
  auto state = std::make_unique<State>();
  LocalClusterOptions local;
  local.workers = std::max(options.embeddedWorkers, 1U);
  // Compile work in child processes: a module that crashes LLVM costs a
  // worker restart, not the process that serves the tools.
  local.isolateWorkers = true;
  KILN_ASSIGN_OR_RETURN(EmbeddedClient embedded, connectOrStartLocal(options.client, local));
  KILN_ASSIGN_OR_RETURN(client::SessionTypeSpaces llvm, embedded.client->getSpaces("llvm"));
  KILN_ASSIGN_OR_RETURN(state->spaces, toolSpacesFrom(llvm));
  state->cluster = std::move(embedded.cluster);
  state->options = std::move(options);
  state->schema = toolSchema(state->spaces, state->options.limits).dump(2);
  state->results = resultSchemas(state->spaces).dump(2);
  return std::unique_ptr<ToolExecutor>(new ToolExecutor(std::move(state)));
}

std::string ToolExecutor::call(const CallerId& caller, std::string_view tool,
                               std::string_view argumentsJson) {
  State& s = *state_;
  s.calls.fetch_add(1, std::memory_order_relaxed);
  ToolAnswer answer = [&]() -> ToolAnswer {
    auto found = s.callerFor(caller);
    if (auto* failure = std::get_if<ToolFailure>(&found)) return *failure;
    Caller& who = *std::get<std::shared_ptr<Caller>>(found);
    InFlight counted(who);
    if (who.inFlight.load() > s.options.limits.maxConcurrentCallsPerCaller) {
      return ToolFailure{ToolError::kQuotaExceeded,
                         fmt::format("over {} calls of yours at once "
                                     "(ToolLimits::maxConcurrentCallsPerCaller): retry when "
                                     "some have answered",
                                     s.options.limits.maxConcurrentCallsPerCaller)};
    }
    ParsedCall parsed = parseCall(tool, argumentsJson, s.spaces, s.options.limits);
    if (auto* failure = std::get_if<ToolFailure>(&parsed)) return *failure;
    const ToolRequest& request = std::get<ToolRequest>(parsed);
    if (request.tool == kApplyPasses) {
      s.passesAsked.fetch_add(request.state.passes.size(), std::memory_order_relaxed);
    }
    return s.run(who, request);
  }();
  if (std::holds_alternative<ToolFailure>(answer)) {
    s.errors.fetch_add(1, std::memory_order_relaxed);
  }
  return answerText(answer);
}

std::vector<std::string> ToolExecutor::callBatch(const CallerId& caller,
                                                 const std::vector<ToolCall>& calls) {
  std::vector<std::string> answers(calls.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < calls.size(); i = next.fetch_add(1)) {
      answers[i] = call(caller, calls[i].tool, calls[i].arguments);
    }
  };
  // As many threads as the caller may have calls in flight: the rest of the
  // batch waits for one of them, it is not refused.
  const std::size_t threads =
      std::min(calls.size(), std::max<std::size_t>(limits().maxConcurrentCallsPerCaller, 1));
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  return answers;
}

std::string ToolExecutor::schemaJson(bool results) const {
  return results ? state_->results : state_->schema;
}

const ToolLimits& ToolExecutor::limits() const { return state_->options.limits; }

ExecutorStats ToolExecutor::stats() const {
  const State& s = *state_;
  ExecutorStats stats;
  stats.calls = s.calls.load();
  stats.errors = s.errors.load();
  stats.passesAsked = s.passesAsked.load();
  stats.passesApplied = s.counters.passesApplied.load();
  stats.prefixHits = s.counters.prefixHits.load();
  stats.sessionsStarted = s.counters.sessionsStarted.load();
  return stats;
}

void ToolExecutor::forgetCaller(const CallerId& caller) {
  std::shared_ptr<Caller> gone;
  {
    std::lock_guard lock(state_->callersMutex);
    auto it = state_->callers.find(caller);
    if (it == state_->callers.end()) return;
    gone = std::move(it->second);
    state_->callers.erase(it);
  }
  // Its sessions end here, outside the executor's lock (calls of the caller
  // still running hold it alive until they answer).
}

}  // namespace kiln::agent_tools
