// A small HTTP server (cpp-httplib from Debian) that serves GET /metrics from
// a Registry and any GET routes its owner adds (the dashboard). It binds
// 127.0.0.1 unless told otherwise, starts and stops only when asked, and can
// take port 0 and report the port it got. Unknown paths answer 404, known
// paths with another method 405. httplib stays out of this header.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <kiln/logging.h>
#include <kiln/status.h>
#include "common/metrics/registry.h"

namespace kiln::metrics {

struct HttpRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;  // decoded query parameters
};

struct HttpResponse {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

// Runs on one of the endpoint's threads; must be thread-safe.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpEndpointOptions {
  std::string host = "127.0.0.1";  // anything else exposes the metrics beyond this machine
  int port = 0;                    // 0 = any free port; port() tells which
  std::chrono::milliseconds readTimeout{5000};
  std::chrono::milliseconds startTimeout{5000};
  std::size_t maxRequestBodyBytes = 64 * 1024;  // GET needs none; refuse big uploads early
};

// What the router decides for a request, before any handler runs.
enum class RouteDecision { kServe, kNotFound, kMethodNotAllowed };
// GET and HEAD of a known path are served; other methods of a known path are
// 405; everything else is 404.
RouteDecision decideRoute(bool pathKnown, const std::string& method);

class HttpEndpoint {
 public:
  // Serves `registry` (which must outlive the endpoint) at /metrics. Fails
  // with invalid-argument on a bad port or empty host.
  static Result<std::unique_ptr<HttpEndpoint>> create(HttpEndpointOptions options,
                                                      const Registry& registry, Logger logger);
  ~HttpEndpoint();  // stops
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Adds a GET route for an exact path ("/dashboard"). Only before start():
  // the route table is then read by the server threads without a lock.
  // Fails on a path that does not start with '/', a path already routed, or
  // after start().
  Status addRoute(const std::string& path, HttpHandler handler);

  // Binds and starts serving on a background thread; returns the bound port.
  // Fails with invalid-argument if the address cannot be bound (in use, not
  // local), timeout if the server thread does not come up in time.
  Result<int> start();
  // Stops serving and joins the thread. Safe to call repeatedly; an endpoint
  // is not started again (create a new one).
  void stop();

  bool running() const;
  int port() const;  // the bound port once started, else 0
  std::string url(const std::string& path = "/metrics") const;

 private:
  struct Impl;
  explicit HttpEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::metrics
