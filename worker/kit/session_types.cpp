#include <kiln/kit/session_types.h>

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

SessionTypeRegistry::~SessionTypeRegistry() { (void)shutdown(); }

Status SessionTypeRegistry::start(ContextResources& resources) {
  for (const PendingType& type : pending_) {
    if (ready_.count(type.name) != 0) {
      return invalidArgument(fmt::format("session type '{}' is registered twice", type.name));
    }
    auto context = std::find_if(contexts_.begin(), contexts_.end(),
                                [&](const auto& c) { return c.first == type.contextType; });
    if (context == contexts_.end()) {
      contexts_.emplace_back(type.contextType, type.makeContext(resources));
      Status init = contexts_.back().second->init();
      if (!init.ok()) {
        contexts_.pop_back();
        (void)shutdown();
        return Status(init.code(), fmt::format("context of session type '{}' failed to start: {}",
                                               type.name, init.message()));
      }
      context = std::prev(contexts_.end());
    }
    ServiceContext* ctx = context->second.get();
    auto probe = type.makeSession(*ctx);
    ReadySessionType ready;
    ready.info = {type.name,
                  probe->compilerVersion(),
                  probe->actionSpaces(),
                  probe->observationSpaces(),
                  probe->replayPolicy(),
                  type.footprint};
    ready.context = ctx;
    ready.create = [make = type.makeSession, ctx] { return make(*ctx); };
    ready_.emplace(type.name, std::move(ready));
  }
  return okStatus();
}

Status SessionTypeRegistry::shutdown() {
  Status first;
  while (!contexts_.empty()) {
    Status s = contexts_.back().second->shutdown();
    if (first.ok() && !s.ok()) first = s;
    contexts_.pop_back();
  }
  ready_.clear();
  return first;
}

bool SessionTypeRegistry::changesSharedState(const std::string& key) const {
  for (const auto& [type, context] : contexts_) {
    if (context->changesSharedState(key)) return true;
  }
  return false;
}

Result<std::string> SessionTypeRegistry::handleContextParameter(const std::string& key,
                                                                const std::string& value) const {
  for (const auto& [type, context] : contexts_) {
    auto answer = context->handleParameter(key, value);
    if (answer.ok() || answer.status().code() != ErrorCode::kNotFound) return answer;
  }
  return notFound("unknown worker parameter '" + key +
                  "' (service.benchmark_cache.* and the session types' own keys are known)");
}

const ReadySessionType* SessionTypeRegistry::find(const std::string& name) const {
  auto found = ready_.find(name);
  return found == ready_.end() ? nullptr : &found->second;
}

std::vector<std::string> SessionTypeRegistry::names() const {
  std::vector<std::string> names;
  for (const auto& [name, type] : ready_) names.push_back(name);
  if (names.empty()) {
    for (const PendingType& type : pending_) names.push_back(type.name);
  }
  return names;
}

std::optional<std::string> SessionTypeRegistry::damage() const {
  for (const auto& [type, context] : contexts_) {
    if (auto damage = context->damage()) return damage;
  }
  return std::nullopt;
}

}  // namespace kiln
