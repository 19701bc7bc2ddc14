// `kiln tools serve`: the agent tools over HTTP for trainers that run on
// other machines, a client of a kiln cluster like any other (the backend,
// tool_backend.h). Endpoints (tool_requests.h has the bodies):
//   GET  /v1/tools         the tool list (?results=1: the answers' schemas)
//   POST /v1/tools/call    one call
//   POST /v1/tools/batch   many calls of one caller, run concurrently
// Every request carries `Authorization: Bearer KEY`, a key of the operator's
// --keys file (api_keys.h), which names the caller the backend sees (its
// episodes, clients and caches are its own) and its quotas (caller_gate.h).
// It is checked before a body is read. Every error is JSON with a code.
// httplib stays out of this header.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <kiln/logging.h>
#include <kiln/status.h>
#include "tools/tools_service/api_keys.h"
#include "tools/tools_service/caller_gate.h"
#include "tools/tools_service/tool_backend.h"

namespace kiln::tools_service {

struct ToolsServiceOptions {
  std::string host = "127.0.0.1";  // anything else serves the tools beyond this machine
  int port = 0;                    // 0 = any free port; port() tells which
  // A body over this is refused (413, too_large) before it is read whole:
  // --max-body-bytes. Bounds a module sent inline (base64 adds a third).
  std::size_t maxBodyBytes = std::size_t{16} << 20;
  GateLimits callerDefaults;  // a key's quotas where its line names none
  // Requests served at once, all callers together (--http-threads); a
  // caller's own calls in flight are bounded by its concurrency quota.
  unsigned httpThreads = 32;
  std::chrono::milliseconds readTimeout{30000};
  std::chrono::milliseconds startTimeout{5000};
};

class ToolsHttpService {
 public:
  // `backend` must outlive the service. invalid-argument on a bad port or
  // empty host.
  static Result<std::unique_ptr<ToolsHttpService>> create(ToolsServiceOptions options, ApiKeys keys,
                                                          ToolBackend& backend, Logger logger);
  ~ToolsHttpService();  // stops
  ToolsHttpService(const ToolsHttpService&) = delete;
  ToolsHttpService& operator=(const ToolsHttpService&) = delete;

  // Binds the address without serving yet; the bound port. invalid-argument
  // when it cannot be bound. `kiln tools serve` binds before it starts a
  // cluster, so that a port in use fails at once with nothing started.
  Result<int> bind();
  // Binds (if bind() did not) and serves on background threads; the bound
  // port. timeout when the server does not come up.
  Result<int> start();
  // Stops serving (requests in progress are answered first). Idempotent.
  void stop();
  int port() const;
  std::string url(const std::string& path = "/v1/tools") const;

 private:
  struct Impl;
  explicit ToolsHttpService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::tools_service
