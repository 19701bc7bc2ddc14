#include "tools/tools_service/tools_http_service.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "common/metrics/http_serving.h"
#include "tools/agent_tools/tool_error.h"
#include "tools/tools_service/tool_requests.h"

namespace kiln::tools_service {

namespace {

using agent_tools::ToolError;
using agent_tools::toolErrorName;

constexpr const char* kJson = "application/json";
constexpr std::string_view kSchemaPath = "/v1/tools";
constexpr std::string_view kCallPath = "/v1/tools/call";
constexpr std::string_view kBatchPath = "/v1/tools/batch";

// The method each path is served with.
const std::map<std::string, std::string, std::less<>>& endpoints() {
  static const std::map<std::string, std::string, std::less<>> kEndpoints = {
      {std::string(kSchemaPath), "GET"},
      {std::string(kCallPath), "POST"},
      {std::string(kBatchPath), "POST"},
  };
  return kEndpoints;
}

void respond(httplib::Response& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), kJson);
}

void respondError(httplib::Response& res, int status, std::string_view code,
                  std::string_view message) {
  respond(res, status, errorBody(code, message));
}

// The key after "Bearer " (the scheme's case ignored), or empty.
std::string bearerKey(const httplib::Request& req) {
  static constexpr std::string_view kScheme = "bearer ";
  std::string value = req.get_header_value("Authorization");  // a copy
  if (value.size() <= kScheme.size()) return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return {};
  }
  return value.substr(kScheme.size());
}

}  // namespace

struct ToolsHttpService::Impl {
  ToolsServiceOptions options;
  ApiKeys keys;
  ToolBackend* backend = nullptr;
  Logger logger;
  std::map<std::string, std::unique_ptr<CallerGate>, std::less<>> gates;  // fixed after create
  httplib::Server server;
  std::thread thread;
  int port = 0;
  bool bound = false;
  bool started = false;
  bool stopped = false;

  // The caller of a request, or null after answering 401.
  const ApiKey* authenticate(const httplib::Request& req, httplib::Response& res) const {
    const std::string presented = bearerKey(req);
    const ApiKey* key = presented.empty() ? nullptr : keys.find(presented);
    if (key != nullptr) return key;
    res.set_header("WWW-Authenticate", "Bearer");
    respondError(res, 401, toolErrorName(ToolError::kUnauthorized),
                 presented.empty()
                     ? "no API key: send the header `Authorization: Bearer KEY` with a key of "
                       "the service's --keys file"
                     : "unknown API key (keys are the lines of the service's --keys file)");
    return nullptr;
  }

  // Before httplib reads a body: the key, then the path and method.
  httplib::Server::HandlerResponse preRoute(const httplib::Request& req, httplib::Response& res) {
    using Handled = httplib::Server::HandlerResponse;
    if (authenticate(req, res) == nullptr) return Handled::Handled;
    auto endpoint = endpoints().find(req.path);
    if (endpoint == endpoints().end()) {
      respondError(res, 404, toolErrorName(ToolError::kUnknownEndpoint),
                   fmt::format("no endpoint {}; the endpoints are GET {}, POST {} and POST {}",
                               req.path, kSchemaPath, kCallPath, kBatchPath));
      return Handled::Handled;
    }
    if (req.method != endpoint->second) {
      res.set_header("Allow", endpoint->second);
      respondError(res, 405, toolErrorName(ToolError::kUnknownEndpoint),
                   fmt::format("{} {}: this endpoint takes {} only", req.method, req.path,
                               endpoint->second));
      return Handled::Handled;
    }
    if (req.path == kSchemaPath) {
      const bool results = req.has_param("results") && req.get_param_value("results") != "0";
      respond(res, 200, backend->schemaJson(results));
      return Handled::Handled;
    }
    return Handled::Unhandled;  // a POST: httplib reads its body (413 over the limit)
  }

  CallerGate& gateOf(const ApiKey& key) { return *gates.find(key.caller)->second; }

  void serveCall(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    const ApiKey* key = authenticate(req, res);
    if (key == nullptr) return;
    ParsedCalls parsed = parseCallBody(body);
    if (!parsed.error.empty()) return respond(res, 400, std::move(parsed.error));
    Result<Admission> admitted = gateOf(*key).admit(1, 1, GateClock::now());
    if (!admitted.ok()) return refuse(res, admitted.status());
    const agent_tools::ToolCall& call = parsed.calls.front();
    std::string answer = backend->call(key->caller, call.tool, call.arguments);
    const int status = statusOfAnswer(answer);
    respond(res, status, std::move(answer));
  }

  void serveBatch(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    const ApiKey* key = authenticate(req, res);
    if (key == nullptr) return;
    ParsedCalls parsed = parseBatchBody(body);
    if (!parsed.error.empty()) return respond(res, 400, std::move(parsed.error));
    CallerGate& gate = gateOf(*key);
    const auto calls = static_cast<unsigned>(parsed.calls.size());
    const unsigned width = std::min(calls, gate.limits().maxConcurrent);
    Result<Admission> admitted = gate.admit(calls, width, GateClock::now());
    if (!admitted.ok()) return refuse(res, admitted.status());
    respond(res, 200, joinAnswers(runCalls(*backend, key->caller, parsed.calls, width)));
  }

  void refuse(httplib::Response& res, const Status& status) const {
    logger->debug("refused: {}", status.message());
    res.set_header("Retry-After", "1");
    respondError(res, 429, toolErrorName(ToolError::kQuotaExceeded), status.message());
  }

  // httplib's own refusals (a body over the limit, a request it cannot
  // parse) come without a body: give them the JSON every error has.
  void fillError(httplib::Response& res) const {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      return respondError(
          res, 413, toolErrorName(ToolError::kTooLarge),
          fmt::format("the request body is over {} bytes (the service's --max-body-bytes)",
                      options.maxBodyBytes));
    }
    if (res.status == 404 || res.status == 405) {
      return respondError(res, res.status, toolErrorName(ToolError::kUnknownEndpoint),
                          "no such endpoint");
    }
    if (res.status >= 500) {
      return respondError(res, res.status, toolErrorName(ToolError::kInternal),
                          "the service failed on this request");
    }
    respondError(res, res.status, toolErrorName(ToolError::kInvalidJson),
                 fmt::format("malformed HTTP request (status {})", res.status));
  }
};

ToolsHttpService::ToolsHttpService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ToolsHttpService::~ToolsHttpService() { stop(); }

Result<std::unique_ptr<ToolsHttpService>> ToolsHttpService::create(ToolsServiceOptions options,
                                                                   ApiKeys keys,
                                                                   ToolBackend& backend,
                                                                   Logger logger) {
  if (options.host.empty()) return invalidArgument("kiln tools serve: empty host to listen on");
  if (options.port < 0 || options.port > 65535) {
    return invalidArgument(fmt::format(
        "kiln tools serve: port {} is outside 0..65535 (0 = any free port)", options.port));
  }
  if (options.httpThreads == 0) return invalidArgument("kiln tools serve: --http-threads is 0");
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->keys = std::move(keys);
  impl->backend = &backend;
  impl->logger = logger ? std::move(logger) : makeNullLogger("tools-serve");
  for (const ApiKey& key : impl->keys.keys()) {
    impl->gates.emplace(key.caller,
                        std::make_unique<CallerGate>(
                            key.caller, gateLimits(key.quota, impl->options.callerDefaults)));
  }
  return std::unique_ptr<ToolsHttpService>(new ToolsHttpService(std::move(impl)));
}

Result<int> ToolsHttpService::bind() {
  Impl& impl = *impl_;
  if (impl.stopped) return invalidArgument("kiln tools serve: already stopped; create a new one");
  if (impl.bound) return impl.port;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(impl.options.readTimeout);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(impl.options.readTimeout - seconds);
  impl.server.set_read_timeout(seconds.count(), micros.count());
  impl.server.set_payload_max_length(impl.options.maxBodyBytes);
  const unsigned threads = impl.options.httpThreads;
  impl.server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl.server.set_pre_routing_handler([&impl](const httplib::Request& req, httplib::Response& res) {
    return impl.preRoute(req, res);
  });
  // Bodies come through a content reader: a plain handler would have
  // httplib parse a form-encoded body (curl -d's and urllib's default type)
  // as a form and refuse one over 8 KiB whatever --max-body-bytes says.
  // The reader still refuses a body over it (413).
  using Serve = void (Impl::*)(const httplib::Request&, const std::string&, httplib::Response&);
  for (auto [path, serve] : {std::pair<std::string_view, Serve>{kCallPath, &Impl::serveCall},
                             std::pair<std::string_view, Serve>{kBatchPath, &Impl::serveBatch}}) {
    impl.server.Post(std::string(path),
                     [&impl, serve](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) {
                       std::string body;
                       const bool read = reader([&body](const char* data, std::size_t length) {
                         body.append(data, length);
                         return true;
                       });
                       if (read) (impl.*serve)(req, body, res);
                     });
  }
  impl.server.set_error_handler(
      [&impl](const httplib::Request&, httplib::Response& res) { impl.fillError(res); });
  impl.server.set_exception_handler(
      [&impl](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          impl.logger->error("{} {} threw: {}", req.method, req.path, e.what());
        } catch (...) {
          impl.logger->error("{} {} threw", req.method, req.path);
        }
        respondError(res, 500, toolErrorName(ToolError::kInternal),
                     "the service failed on this request (its log says why)");
      });
  // Not SO_REUSEPORT: a second service must not take half of this one's requests.
  const int port = bindWithoutReusePort(impl.server, impl.options.host, impl.options.port);
  if (port <= 0) {
    return invalidArgument(fmt::format(
        "kiln tools serve: cannot bind {}:{} (address in use, or not an address of this machine; "
        "--listen)",
        impl.options.host, impl.options.port));
  }
  impl.port = port;
  impl.bound = true;
  return port;
}

Result<int> ToolsHttpService::start() {
  Impl& impl = *impl_;
  if (impl.started) return impl.port;
  KILN_ASSIGN_OR_RETURN(const int port, bind());
  impl.started = true;
  if (Status serving = serveOnThread(impl.server, impl.thread, impl.options.startTimeout,
                                     "kiln tools serve", port);
      !serving.ok()) {
    stop();
    return serving;
  }
  return port;
}

void ToolsHttpService::stop() {
  Impl& impl = *impl_;
  if (!impl.thread.joinable() && !impl.started) return;
  stopServing(impl.server, impl.thread);
  impl.started = false;
  impl.stopped = true;
  impl.port = 0;
}

int ToolsHttpService::port() const { return impl_->port; }

std::string ToolsHttpService::url(const std::string& path) const {
  return fmt::format("http://{}:{}{}", impl_->options.host, impl_->port, path);
}

}  // namespace kiln::tools_service
