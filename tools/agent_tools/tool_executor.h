// Runs kiln's agent tools (tool_schema.h) for many callers at once on a kiln
// cluster (mechanism; the argument rules live in tool_arguments.h). A call is
// a tool name and its JSON arguments; the answer is JSON: the tool's result,
// or {"error": {"code": <ToolError name>, "message": "..."}}. Never throws
// for a caller's input.
//
// Callers are kept apart: each has its own kiln clients (so the cluster's
// per-client quotas and "a client's bytes are its own" hold per caller), its
// own episodes (another caller's handle is unknown_episode) and its own
// prefix cache; one caller's errors, quota refusals or hostile modules have
// no effect on another's calls. Thread-safe: call() and callBatch() from any
// number of threads.
//
// Stateless calls (a benchmark or module plus a pass list) reuse work: the
// states after recently applied pass lists stay open as sessions, keyed by
// (benchmark, pass prefix), and a call forks the one with the longest prefix
// of its list and applies only the rest. Below that, the workers' transition
// cache replays steps any session took before, and the coordinator places a
// benchmark's sessions where it was placed lately (its caches are there).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/client/client.h>
#include <kiln/status.h>
#include "tools/agent_tools/tool_limits.h"

namespace kiln::agent_tools {

// Who makes a call: an API key's caller name in `kiln tools serve`, a
// trainer's own name in Python. Any non-empty string.
using CallerId = std::string;

struct ToolCall {
  std::string tool;
  std::string arguments;  // JSON object text
};

struct ExecutorOptions {
  // The cluster: client.coordinator, or empty for an embedded single-node
  // cluster started for this executor (embeddedWorkers workers, each in a
  // child process of its own, as Python's default).
  client::ClientOptions client;
  unsigned embeddedWorkers = 1;
  ToolLimits limits;
  // Tests only: runs in a call that opens an episode (keep_episode,
  // fork_episode) once its place under maxEpisodesPerCaller is taken and
  // before the episode exists, to hold two such calls at that point.
  std::function<void()> afterEpisodeReserved;
};

// Counters since the executor started (for benches and the service's status).
struct ExecutorStats {
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;           // answers that were JSON errors
  std::uint64_t passesAsked = 0;      // passes named by apply_passes calls
  std::uint64_t passesApplied = 0;    // passes sent to a worker
  std::uint64_t prefixHits = 0;       // stateless calls that forked a cached prefix
  std::uint64_t sessionsStarted = 0;  // sessions started from a benchmark
};

class ToolExecutor {
 public:
  // Connects to (or starts) the cluster and reads the llvm type's spaces;
  // unavailable-like errors (disconnected, timeout) when it cannot.
  static Result<std::unique_ptr<ToolExecutor>> create(ExecutorOptions options);
  ~ToolExecutor();
  ToolExecutor(const ToolExecutor&) = delete;
  ToolExecutor& operator=(const ToolExecutor&) = delete;

  // One call; the answer as JSON text (see above).
  std::string call(const CallerId& caller, std::string_view tool, std::string_view argumentsJson);
  // Many calls of one caller at once, answers in order: the batch runs as
  // many at a time as the caller's concurrency limit and the rest wait for a
  // free place (other calls of the caller running meanwhile count against
  // the limit too: those a batch meets over it are quota_exceeded).
  std::vector<std::string> callBatch(const CallerId& caller, const std::vector<ToolCall>& calls);

  // The tool list this executor serves (tool_schema.h), as JSON text; with
  // `results`, the answers' schemas ({tool: schema}) instead.
  std::string schemaJson(bool results = false) const;
  const ToolLimits& limits() const;
  ExecutorStats stats() const;
  // Ends a caller's episodes and drops its cached prefixes and clients.
  void forgetCaller(const CallerId& caller);

 private:
  struct State;
  explicit ToolExecutor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kiln::agent_tools
