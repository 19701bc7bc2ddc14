#include "common/metrics/http_endpoint.h"

#include <httplib.h>
#include <sys/socket.h>

#include <condition_variable>
#include <thread>

#include <fmt/format.h>

#include "common/metrics/exposition.h"
#include "common/metrics/http_serving.h"

namespace kiln::metrics {

RouteDecision decideRoute(bool pathKnown, const std::string& method) {
  if (!pathKnown) return RouteDecision::kNotFound;
  if (method == "GET" || method == "HEAD") return RouteDecision::kServe;
  return RouteDecision::kMethodNotAllowed;
}

struct HttpEndpoint::Impl {
  HttpEndpointOptions options;
  Logger logger;
  std::map<std::string, HttpHandler> routes;
  httplib::Server server;
  std::thread thread;
  int port = 0;
  bool started = false;
  bool stopped = false;  // httplib servers are not restarted: create a new endpoint

  // Every request goes through here before httplib's own routing, so that
  // the 404/405 rules hold for every path and method alike.
  httplib::Server::HandlerResponse route(const httplib::Request& req, httplib::Response& res) {
    auto found = routes.find(req.path);
    switch (decideRoute(found != routes.end(), req.method)) {
      case RouteDecision::kNotFound:
        res.status = 404;
        res.set_content(fmt::format("no route for {}\n", req.path), "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      case RouteDecision::kMethodNotAllowed:
        res.status = 405;
        res.set_header("Allow", "GET, HEAD");
        res.set_content(fmt::format("{} {}: only GET and HEAD are allowed\n", req.method, req.path),
                        "text/plain; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      case RouteDecision::kServe:
        break;
    }
    HttpRequest request{req.method, req.path, {}};
    for (const auto& [key, value] : req.params) request.params.emplace(key, value);
    HttpResponse response;
    try {
      response = found->second(request);
    } catch (const std::exception& e) {
      logger->error("http handler for {} threw: {}", req.path, e.what());
      response = HttpResponse{500, "text/plain; charset=utf-8", "internal error\n"};
    }
    res.status = response.status;
    res.set_content(std::move(response.body), response.contentType.c_str());
    return httplib::Server::HandlerResponse::Handled;
  }
};

HttpEndpoint::HttpEndpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::create(HttpEndpointOptions options,
                                                           const Registry& registry,
                                                           Logger logger) {
  if (options.host.empty()) return invalidArgument("http endpoint: empty host to bind");
  if (options.port < 0 || options.port > 65535) {
    return invalidArgument(fmt::format(
        "http endpoint: port {} is outside 0..65535 (0 = any free port)", options.port));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->logger = logger ? std::move(logger) : makeNullLogger("metrics-http");
  impl->routes.emplace("/metrics", [&registry](const HttpRequest&) {
    return HttpResponse{200, std::string(kTextContentType), registry.renderText()};
  });
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(impl)));
}

Status HttpEndpoint::addRoute(const std::string& path, HttpHandler handler) {
  if (impl_->started) {
    return invalidArgument(fmt::format("http endpoint: cannot add route {} after start()", path));
  }
  if (path.empty() || path[0] != '/') {
    return invalidArgument(fmt::format("http endpoint: route '{}' must start with '/'", path));
  }
  if (!handler) return invalidArgument(fmt::format("http endpoint: route {} has no handler", path));
  if (!impl_->routes.emplace(path, std::move(handler)).second) {
    return invalidArgument(fmt::format("http endpoint: route {} is already served", path));
  }
  return okStatus();
}

Result<int> HttpEndpoint::start() {
  Impl& impl = *impl_;
  if (impl.started) return impl.port;
  if (impl.stopped) {
    return invalidArgument("http endpoint: already stopped; create a new endpoint to serve again");
  }
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(impl.options.readTimeout);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(impl.options.readTimeout - seconds);
  impl.server.set_read_timeout(seconds.count(), micros.count());
  impl.server.set_payload_max_length(impl.options.maxRequestBodyBytes);
  impl.server.set_pre_routing_handler([&impl](const httplib::Request& req, httplib::Response& res) {
    return impl.route(req, res);
  });

  // Not SO_REUSEPORT: a second endpoint must not share this one's scrapes.
  const int port = bindWithoutReusePort(impl.server, impl.options.host, impl.options.port);
  if (port <= 0) {
    return invalidArgument(fmt::format(
        "http endpoint: cannot bind {}:{} (address in use, or not an address of this machine)",
        impl.options.host, impl.options.port));
  }
  impl.port = port;
  impl.started = true;
  if (Status serving =
          serveOnThread(impl.server, impl.thread, impl.options.startTimeout, "http endpoint", port);
      !serving.ok()) {
    stop();
    return serving;
  }
  impl.logger->info("serving metrics at {}", url());
  return port;
}

void HttpEndpoint::stop() {
  Impl& impl = *impl_;
  if (!impl.thread.joinable() && !impl.started) return;
  stopServing(impl.server, impl.thread);
  impl.started = false;
  impl.stopped = true;
  impl.port = 0;
}

bool HttpEndpoint::running() const { return impl_->started && impl_->server.is_running(); }

int HttpEndpoint::port() const { return impl_->port; }

std::string HttpEndpoint::url(const std::string& path) const {
  return fmt::format("http://{}:{}{}", impl_->options.host, impl_->port, path);
}

}  // namespace kiln::metrics
