// The session types one worker process hosts (public). Each type names its
// CompilationSession class and the ServiceContext class it needs; contexts
// are created once per process and shared by every type that names the same
// class, so init()/shutdown() run exactly once each.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeindex>
#include <vector>

#include <kiln/kit/compilation_session.h>
#include <kiln/kit/service_context.h>

namespace kiln {

// What one session of a type holds on its host besides memory, declared when
// the type is registered, so that a worker can bound it per client.
struct SessionFootprint {
  // Compiler processes one session may hold at once (the mlgo types: the opt
  // or llc a session drives, alive between its steps).
  std::uint32_t compilerProcesses = 0;
};

struct SessionTypeInfo {
  std::string name;
  std::string compilerVersion;
  std::vector<Space> actionSpaces;
  std::vector<Space> observationSpaces;
  ReplayPolicy replay;
  SessionFootprint footprint;
};

// A type ready to create sessions: its context is initialized.
struct ReadySessionType {
  SessionTypeInfo info;
  ServiceContext* context = nullptr;
  std::function<std::unique_ptr<CompilationSession>()> create;
};

class SessionTypeRegistry {
 public:
  SessionTypeRegistry() = default;
  SessionTypeRegistry(const SessionTypeRegistry&) = delete;
  SessionTypeRegistry& operator=(const SessionTypeRegistry&) = delete;
  ~SessionTypeRegistry();

  // Session must be constructible from Context&; Context from ContextResources&.
  template <class Session, class Context = ServiceContext>
  void add(std::string name, SessionFootprint footprint = {}) {
    add<Session, Context>(
        std::move(name), [](ContextResources& r) { return std::make_unique<Context>(r); },
        footprint);
  }
  // The same with the context made by `makeContext`, e.g. to hand contexts
  // of several types state their process shares (used by the first type
  // registered with each Context class).
  template <class Session, class Context>
  void add(std::string name, std::function<std::unique_ptr<Context>(ContextResources&)> makeContext,
           SessionFootprint footprint = {}) {
    static_assert(std::is_base_of_v<CompilationSession, Session>);
    static_assert(std::is_base_of_v<ServiceContext, Context>);
    pending_.push_back(PendingType{std::move(name), std::type_index(typeid(Context)),
                                   [make = std::move(makeContext)](ContextResources& r)
                                       -> std::unique_ptr<ServiceContext> { return make(r); },
                                   [](ServiceContext& c) -> std::unique_ptr<CompilationSession> {
                                     return std::make_unique<Session>(static_cast<Context&>(c));
                                   },
                                   footprint});
  }

  // Creates and initializes every context, then probes each type for its
  // spaces. Fails (after shutting down what it started) if an init fails.
  Status start(ContextResources& resources);
  // Runs every context's shutdown() once, in reverse order of creation.
  Status shutdown();

  const ReadySessionType* find(const std::string& name) const;
  // Offers a worker-level parameter to every context in creation order; the
  // first answer that is not not-found wins.
  // Whether any context says `key` changes what every session shares.
  bool changesSharedState(const std::string& key) const;
  Result<std::string> handleContextParameter(const std::string& key,
                                             const std::string& value) const;
  std::vector<std::string> names() const;
  // The first context's damage() (ServiceContext), nullopt if none reports any.
  std::optional<std::string> damage() const;
  bool started() const { return !ready_.empty() || pending_.empty(); }

 private:
  struct PendingType {
    std::string name;
    std::type_index contextType;
    std::function<std::unique_ptr<ServiceContext>(ContextResources&)> makeContext;
    std::function<std::unique_ptr<CompilationSession>(ServiceContext&)> makeSession;
    SessionFootprint footprint;
  };
  std::vector<PendingType> pending_;
  std::vector<std::pair<std::type_index, std::unique_ptr<ServiceContext>>> contexts_;
  std::map<std::string, ReadySessionType> ready_;
};

}  // namespace kiln
