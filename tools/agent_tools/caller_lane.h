// One caller's connection to the cluster (mechanism): a kiln client, the
// sessions it opened for the caller (episodes, cached prefixes) and the
// tools run on them. A lane is used by one call at a time (its mutex): a
// kiln Client is single-threaded, and a session belongs to its client. A
// caller has up to ToolLimits::maxConcurrentCallsPerCaller lanes.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include <kiln/client/client.h>
#include "tools/agent_tools/lane_choice.h"
#include "tools/agent_tools/prefix_cache.h"
#include "tools/agent_tools/tool_arguments.h"

namespace kiln::agent_tools {

// A tool's answer: its result or why there is none.
using ToolAnswer = std::variant<nlohmann::json, ToolFailure>;

// Counters a lane adds to (the executor's, shared by every lane).
struct LaneCounters {
  std::atomic<std::uint64_t> passesApplied{0};
  std::atomic<std::uint64_t> prefixHits{0};
  std::atomic<std::uint64_t> sessionsStarted{0};
};

class CallerLane {
 public:
  CallerLane(std::unique_ptr<client::Client> client, const ToolLimits& limits,
             LaneCounters& counters);
  ~CallerLane();

  std::mutex& mutex() { return mutex_; }

  // The tools; the lane's mutex held. An episode handle for a new episode
  // is `newHandle` (the executor's, unique among all callers).
  ToolAnswer applyPasses(const ToolRequest& request, const std::string& newHandle);
  ToolAnswer observe(const ToolRequest& request);
  ToolAnswer irText(const ToolRequest& request);
  ToolAnswer validate(const ToolRequest& request);
  ToolAnswer compareBaselines(const ToolRequest& request);
  ToolAnswer forkEpisode(const std::string& episode, const std::string& newHandle);
  ToolAnswer endEpisode(const std::string& episode);

  // The prefix cache's keys as they were when the last call on the lane
  // ended (publishKeys, its mutex held), so that a call can choose a lane
  // by its cached prefixes (lane_choice.h) without waiting on a busy one.
  void publishKeys();
  std::ptrdiff_t cachedPrefix(const std::string& benchmark,
                              const std::vector<std::int64_t>& passes) const;

  // Whether an episode lives here; how many do.
  bool hasEpisode(const std::string& episode) const { return episodes_.contains(episode); }

 private:
  struct Open {
    std::unique_ptr<client::Session> session;
    std::int64_t before = 0;  // the benchmark's instruction count
    std::int64_t count = 0;   // this state's
  };
  // The state a request names: an episode, or a cached benchmark state
  // after its passes (made now, from the longest cached prefix, if need
  // be). `observe` is observed on the way when passes run; `observed`
  // holds those values (empty when none ran: observe on the state then).
  struct Resolved {
    Open* open = nullptr;
    std::size_t reused = 0;  // passes served by the cache
    std::size_t applied = 0;
    std::vector<Value> observed;
  };
  std::variant<Resolved, ToolFailure> resolve(const ToolRequest& request,
                                              const std::vector<std::string>& observe);
  std::variant<Resolved, ToolFailure> resolveBenchmark(const ToolRequest& request,
                                                       const std::vector<std::string>& observe);
  std::variant<Open*, ToolFailure> root(const ToolRequest& request);
  // Observations of a state, by name, as JSON (IrInstructionCount first when asked).
  std::variant<std::vector<Value>, ToolFailure> observeOn(client::Session& session,
                                                          const std::vector<std::string>& names);
  // Sheds the older half of the prefix cache (never (benchmark, keep)), each
  // session ended before it returns; whether there was any to shed.
  bool makeRoom(const std::string& benchmark, const std::vector<std::int64_t>& keep);
  // A fork of `session`; when the worker refuses the caller more sessions,
  // the prefix cache sheds its older half (never (benchmark, keep)) and the
  // fork is asked once more.
  Result<std::unique_ptr<client::Session>> forkMakingRoom(client::Session& session,
                                                          const std::string& benchmark,
                                                          const std::vector<std::int64_t>& keep);
  ToolFailure episodeFailure(const std::string& episode, const Status& status);

  std::mutex mutex_;
  std::unique_ptr<client::Client> client_;  // declared first: outlives the sessions
  const ToolLimits& limits_;
  LaneCounters& counters_;
  PrefixCache<Open> prefixes_;
  std::map<std::string, Open> episodes_;
  mutable std::mutex keysMutex_;  // published_ alone
  PrefixKeys published_;
};

}  // namespace kiln::agent_tools
