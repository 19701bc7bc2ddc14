#include "coordinator/coordinator_server.h"

#include <random>

#include <fmt/format.h>

#include "common/transport/readiness_poll.h"
#include "common/transport/router_io.h"

namespace kiln {

CoordinatorServer::CoordinatorServer(CoordinatorConfig config, zmq::context_t& zmq,
                                     const Clock& clock, Logger logger)
    : clock_(clock),
      config_(config),
      logger_(logger),
      core_(std::move(config), clock, std::move(logger)),
      router_(zmq, zmq::socket_type::router) {}

Result<std::unique_ptr<CoordinatorServer>> CoordinatorServer::create(CoordinatorConfig config,
                                                                     zmq::context_t& zmq,
                                                                     const Clock& clock,
                                                                     Logger logger) {
  if (config.liveness < 1) return invalidArgument("liveness must be at least 1 interval");
  if (config.firstWorkerId == 0) {
    // 2^20 starts, 2^32 registrations each: ids stay exact as JSON numbers.
    config.firstWorkerId = (std::uint64_t{std::random_device{}() % (1u << 20)} + 1) << 32;
  }
  std::unique_ptr<CoordinatorServer> server(
      new CoordinatorServer(std::move(config), zmq, clock, std::move(logger)));
  server->router_.set(zmq::sockopt::linger, 0);
  server->router_.set(zmq::sockopt::sndhwm, 100000);
  server->router_.set(zmq::sockopt::rcvhwm, 100000);
  server->router_.set(zmq::sockopt::maxmsgsize,
                      static_cast<int64_t>(2 * server->config_.frames.maxMessageBytes));
  KILN_RETURN_IF_ERROR(secureServer(server->router_, server->config_.security, "coordinator"));
  try {
    server->router_.bind(server->config_.listen);
  } catch (const zmq::error_t& e) {
    return invalidArgument(
        fmt::format("coordinator cannot listen on '{}': {}", server->config_.listen, e.what()));
  }
  server->endpoint_ = server->router_.get(zmq::sockopt::last_endpoint);
  server->logger_->info("coordinator listening on {}{}", server->endpoint_,
                        server->config_.security.keys ? " (CURVE: cluster key required)" : "");
  if (server->config_.workerToken.empty() && !server->config_.security.keys) {
    server->logger_->warn(
        "coordinator registers any worker that reaches {} (no key, no worker token): such a "
        "worker is placed clients' sessions",
        server->endpoint_);
  }
  if (!server->config_.metricsListen.empty()) {
    KILN_ASSIGN_OR_RETURN(server->observe_,
                          CoordinatorObservability::start(server->config_.metricsListen,
                                                          server->clock_, server->logger_));
  }
  return server;
}

void CoordinatorServer::stop() {
  stopping_.store(true);
  wake_.wake();
}

void CoordinatorServer::flush() {
  for (Outgoing& message : out_) sendRouted(router_, message.routingId, std::move(message.frame));
  out_.clear();
}

void CoordinatorServer::readPeers() {
  readRouted(router_, config_.frames, 4096,
             [this](const std::string& peer, InboundMessage m) { core_.handle(peer, m, out_); });
}

void CoordinatorServer::run() {
  ReadinessPoll poll;
  const std::size_t peers = poll.addSocket(router_);
  const std::size_t wake = poll.addFd(wake_.fd());
  while (!stopping_.load()) {
    poll.wait(std::chrono::milliseconds(50));
    if (poll.ready(peers)) readPeers();
    if (poll.ready(wake)) {
      std::vector<int> ignored;
      wake_.drain(ignored);
    }
    core_.tick(out_);
    flush();
    if (observe_) observe_->onTick(core_);
  }
  router_.close();
}

}  // namespace kiln
