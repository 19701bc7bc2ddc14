#include "tools/agent_tools/caller_lane.h"

#include <fmt/format.h>

#include <algorithm>

#include "tools/agent_tools/ir_trim.h"
#include "tools/eval/validation_verdict.h"

namespace kiln::agent_tools {
namespace {

using nlohmann::json;

constexpr const char* kCount = "IrInstructionCount";

std::vector<Value> actionsOf(const std::vector<std::int64_t>& passes, std::size_t from) {
  std::vector<Value> actions;
  for (std::size_t i = from; i < passes.size(); ++i) actions.emplace_back(passes[i]);
  return actions;
}

// IrInstructionCount first, then the caller's other observations.
std::vector<std::string> withCount(const std::vector<std::string>& observe) {
  std::vector<std::string> names = {kCount};
  for (const std::string& name : observe) {
    if (name != kCount) names.push_back(name);
  }
  return names;
}

// The caller's observations from values of withCount(observe), in its order.
std::vector<Value> pick(const std::vector<std::string>& observe, const std::vector<Value>& values) {
  std::vector<Value> picked;
  const std::vector<std::string> names = withCount(observe);
  for (const std::string& name : observe) {
    const auto at = std::find(names.begin(), names.end(), name) - names.begin();
    picked.push_back(values.at(static_cast<std::size_t>(at)));
  }
  return picked;
}

std::int64_t countOf(const Value& value) {
  const auto* count = value.getIf<std::int64_t>();
  return count == nullptr ? 0 : *count;
}

json observationsJson(const std::vector<std::string>& names, const std::vector<Value>& values) {
  json observations = json::object();
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    observations[names[i]] = valueJson(values[i]);
  }
  return observations;
}

}  // namespace

CallerLane::CallerLane(std::unique_ptr<client::Client> client, const ToolLimits& limits,
                       LaneCounters& counters)
    : client_(std::move(client)),
      limits_(limits),
      counters_(counters),
      prefixes_(limits.prefixCacheEntries, limits.prefixCacheInstructions) {}

CallerLane::~CallerLane() = default;

void CallerLane::publishKeys() {
  PrefixKeys keys = prefixes_.keys();
  std::lock_guard lock(keysMutex_);
  published_ = std::move(keys);
}

std::ptrdiff_t CallerLane::cachedPrefix(const std::string& benchmark,
                                        const std::vector<std::int64_t>& passes) const {
  std::lock_guard lock(keysMutex_);
  return longestCachedPrefix(published_, benchmark, passes);
}

ToolFailure CallerLane::episodeFailure(const std::string& episode, const Status& status) {
  ToolFailure failure = fromStatus(status);
  if (failure.error == ToolError::kCompileFailed) {
    // The session's episode is over on the worker: so is the handle.
    episodes_.erase(episode);
    failure.message +=
        fmt::format(" (episode '{}' is over: start another from the benchmark)", episode);
  }
  return failure;
}

std::variant<std::vector<Value>, ToolFailure> CallerLane::observeOn(
    client::Session& session, const std::vector<std::string>& names) {
  if (names.empty()) return std::vector<Value>{};
  auto observed = session.step({}, names);
  if (!observed.ok()) return fromStatus(observed.status());
  return std::move(observed->observations);
}

bool CallerLane::makeRoom(const std::string& benchmark, const std::vector<std::int64_t>& keep) {
  std::vector<Open> shed = prefixes_.shed(benchmark, keep);
  // Ended and answered before the next request: a session only dropped
  // would end after it, and the worker would still count it.
  for (Open& open : shed) (void)open.session->end();
  return !shed.empty();
}

Result<std::unique_ptr<client::Session>> CallerLane::forkMakingRoom(
    client::Session& session, const std::string& benchmark, const std::vector<std::int64_t>& keep) {
  auto fork = session.fork();
  if (!fork.ok() && fork.status().code() == ErrorCode::kOverloaded && makeRoom(benchmark, keep)) {
    fork = session.fork();
  }
  return fork;
}

std::variant<CallerLane::Open*, ToolFailure> CallerLane::root(const ToolRequest& request) {
  client::SessionOptions options;
  options.sessionType = "llvm";
  options.benchmark = request.state.benchmark;
  options.program = request.state.module;
  options.observations = {kCount};
  auto started = client_->startSession(options);
  if (!started.ok() && started.status().code() == ErrorCode::kOverloaded &&
      makeRoom(request.state.benchmark, {})) {
    started = client_->startSession(options);
  }
  if (!started.ok()) {
    ToolFailure failure = fromStatus(started.status());
    if (failure.error == ToolError::kInvalidArguments && request.state.module) {
      failure.error = ToolError::kInvalidModule;
    }
    return failure;
  }
  counters_.sessionsStarted.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t count = countOf((*started)->initialObservations().at(0));
  Open open{std::move(*started), count, count};
  return &prefixes_.put(request.state.benchmark, {}, std::move(open),
                        static_cast<std::uint64_t>(std::max<std::int64_t>(count, 1)));
}

std::variant<CallerLane::Resolved, ToolFailure> CallerLane::resolveBenchmark(
    const ToolRequest& request, const std::vector<std::string>& observe) {
  const std::string& benchmark = request.state.benchmark;
  const std::vector<std::int64_t>& passes = request.state.passes;
  std::size_t reused = 0;
  Open* base = prefixes_.longestPrefix(benchmark, passes, reused);
  if (base == nullptr) {
    auto made = root(request);
    if (auto* failure = std::get_if<ToolFailure>(&made)) return *failure;
    base = std::get<Open*>(made);
  } else if (reused > 0) {
    counters_.prefixHits.fetch_add(1, std::memory_order_relaxed);
  }
  Resolved resolved;
  resolved.reused = reused;
  if (reused == passes.size()) {
    auto observed = observeOn(*base->session, observe);
    if (auto* failure = std::get_if<ToolFailure>(&observed)) return *failure;
    resolved.open = base;
    resolved.observed = std::move(std::get<std::vector<Value>>(observed));
    return resolved;
  }
  // The cached state stays as it is: the rest of the passes run on a fork.
  const std::vector<std::int64_t> prefix(passes.begin(), passes.begin() + reused);
  auto fork = forkMakingRoom(*base->session, benchmark, prefix);
  if (!fork.ok()) {
    // A state the cluster lost (not one it had no room for) is dropped.
    if (fork.status().code() != ErrorCode::kOverloaded) prefixes_.erase(benchmark, prefix);
    return fromStatus(fork.status());
  }
  const std::vector<std::string> names = withCount(observe);
  auto stepped = (*fork)->step(actionsOf(passes, reused), names);
  if (!stepped.ok()) return fromStatus(stepped.status());
  counters_.passesApplied.fetch_add(passes.size() - reused, std::memory_order_relaxed);
  const std::int64_t count = countOf(stepped->observations.at(0));
  Open open{std::move(*fork), base->before, count};
  resolved.open = &prefixes_.put(benchmark, passes, std::move(open),
                                 static_cast<std::uint64_t>(std::max<std::int64_t>(count, 1)));
  resolved.applied = passes.size() - reused;
  resolved.observed = pick(observe, stepped->observations);
  return resolved;
}

std::variant<CallerLane::Resolved, ToolFailure> CallerLane::resolve(
    const ToolRequest& request, const std::vector<std::string>& observe) {
  if (request.state.episode.empty()) return resolveBenchmark(request, observe);
  const std::string& handle = request.state.episode;
  auto it = episodes_.find(handle);
  if (it == episodes_.end()) {
    return ToolFailure{ToolError::kUnknownEpisode,
                       fmt::format("no open episode '{}' of yours", handle)};
  }
  Resolved resolved;
  resolved.open = &it->second;
  if (request.state.passes.empty()) {
    auto observed = observeOn(*it->second.session, observe);
    if (auto* failure = std::get_if<ToolFailure>(&observed)) return *failure;
    resolved.observed = std::move(std::get<std::vector<Value>>(observed));
    return resolved;
  }
  auto stepped = it->second.session->step(actionsOf(request.state.passes, 0), withCount(observe));
  if (!stepped.ok()) return episodeFailure(handle, stepped.status());
  counters_.passesApplied.fetch_add(request.state.passes.size(), std::memory_order_relaxed);
  it->second.count = countOf(stepped->observations.at(0));
  resolved.applied = request.state.passes.size();
  resolved.observed = pick(observe, stepped->observations);
  return resolved;
}

ToolAnswer CallerLane::applyPasses(const ToolRequest& request, const std::string& newHandle) {
  // The count before: the episode's now, or the benchmark's as it came.
  std::int64_t before = 0;
  if (auto it = episodes_.find(request.state.episode); it != episodes_.end()) {
    before = it->second.count;
  }
  auto resolved = resolve(request, request.observe);
  if (auto* failure = std::get_if<ToolFailure>(&resolved)) return *failure;
  Resolved& state = std::get<Resolved>(resolved);
  if (request.state.episode.empty()) before = state.open->before;
  json answer = {
      {"benchmark", request.state.benchmark},
      {"passes_applied", request.state.passes.size()},
      {"passes_reused", state.reused},
      {"instruction_count", {{"before", before}, {"after", state.open->count}}},
      {"observations", observationsJson(request.observe, state.observed)},
      {"episode", nullptr},
  };
  if (!request.state.episode.empty()) {
    answer["episode"] = request.state.episode;
    answer["benchmark"] = episodes_.at(request.state.episode).session->history().options.benchmark;
  } else if (request.keepEpisode) {
    auto fork = forkMakingRoom(*state.open->session, request.state.benchmark, request.state.passes);
    if (!fork.ok()) return fromStatus(fork.status());
    episodes_[newHandle] = Open{std::move(*fork), state.open->before, state.open->count};
    answer["episode"] = newHandle;
  }
  return answer;
}

ToolAnswer CallerLane::observe(const ToolRequest& request) {
  auto resolved = resolve(request, request.observe);
  if (auto* failure = std::get_if<ToolFailure>(&resolved)) return *failure;
  return json{
      {"observations", observationsJson(request.observe, std::get<Resolved>(resolved).observed)}};
}

ToolAnswer CallerLane::irText(const ToolRequest& request) {
  auto resolved = resolve(request, {"Ir"});
  if (auto* failure = std::get_if<ToolFailure>(&resolved)) return *failure;
  const std::vector<Value>& observed = std::get<Resolved>(resolved).observed;
  const auto* ir = observed.at(0).getIf<std::string>();
  if (ir == nullptr) return ToolFailure{ToolError::kInternal, "the Ir observation is not text"};
  TrimmedIr trimmed = trimIr(*ir, request.maxBytes);
  return json{{"text", std::move(trimmed.text)},       {"bytes_shown", trimmed.bytesShown},
              {"bytes_total", trimmed.bytesTotal},     {"trimmed", trimmed.trimmed},
              {"functions_cut", trimmed.functionsCut}, {"note", trimmed.note}};
}

ToolAnswer CallerLane::validate(const ToolRequest& request) {
  auto resolved = resolve(request, {});
  if (auto* failure = std::get_if<ToolFailure>(&resolved)) return *failure;
  auto verdict = eval::validateSessionState(*std::get<Resolved>(resolved).open->session);
  if (!verdict.ok()) return fromStatus(verdict.status());
  return json{{"verdict", eval::validityName(verdict->validity)},
              {"inputs", verdict->inputs},
              {"detail", verdict->detail}};
}

ToolAnswer CallerLane::compareBaselines(const ToolRequest& request) {
  const std::vector<std::string> names = {"IrInstructionCountO0", "IrInstructionCountO3",
                                          "IrInstructionCountOz"};
  auto resolved = resolve(request, names);
  if (auto* failure = std::get_if<ToolFailure>(&resolved)) return *failure;
  const Resolved& state = std::get<Resolved>(resolved);
  const std::int64_t oz = countOf(state.observed.at(2));
  return json{{"instruction_count", state.open->count},
              {"O0", countOf(state.observed.at(0))},
              {"O3", countOf(state.observed.at(1))},
              {"Oz", oz},
              {"ratio_to_Oz", static_cast<double>(state.open->count) /
                                  static_cast<double>(std::max<std::int64_t>(oz, 1))}};
}

ToolAnswer CallerLane::forkEpisode(const std::string& episode, const std::string& newHandle) {
  auto it = episodes_.find(episode);
  if (it == episodes_.end()) {
    return ToolFailure{ToolError::kUnknownEpisode,
                       fmt::format("no open episode '{}' of yours", episode)};
  }
  auto fork = forkMakingRoom(*it->second.session, "", {});
  if (!fork.ok()) return episodeFailure(episode, fork.status());
  episodes_[newHandle] = Open{std::move(*fork), it->second.before, it->second.count};
  return json{{"episode", newHandle}};
}

ToolAnswer CallerLane::endEpisode(const std::string& episode) {
  if (episodes_.erase(episode) == 0) {
    return ToolFailure{ToolError::kUnknownEpisode,
                       fmt::format("no open episode '{}' of yours", episode)};
  }
  return json{{"ended", true}};
}

}  // namespace kiln::agent_tools
