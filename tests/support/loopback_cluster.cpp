#include "tests/support/loopback_cluster.h"

#include "worker/noop_session.h"

namespace kiln::testsupport {

using namespace std::chrono_literals;

std::string CapturedLog::text() const {
  std::string all;
  for (const std::string& line : sink->last_formatted()) all += line;
  return all;
}

bool CapturedLog::contains(const std::string& text) const {
  for (const std::string& line : sink->last_formatted()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

LoopbackCluster::LoopbackCluster(LoopbackClusterOptions options) : options_(std::move(options)) {
  if (options_.keys) {
    auth =
        ZapAuthenticator::start(zmq, *options_.keys, options_.authorizedKeys, log.logger).value();
  }
  ServerSecurity security{options_.keys, auth.get()};
  CoordinatorConfig config;
  config.listen = "tcp://127.0.0.1:0";
  config.heartbeatInterval = 100ms;
  config.security = security;
  config.workerToken = options_.workerToken;
  coordinator = CoordinatorServer::create(config, zmq, clock, makeNullLogger("c")).value();
  coordinatorThread = std::thread([this] { coordinator->run(); });
  types.add<NoopSession>("noop");
  worker = startWorker(zmq, security, types);
  workerThread = std::thread([this] { worker->run(); });
}

LoopbackCluster::~LoopbackCluster() {
  worker->stop();
  workerThread.join();
  worker.reset();
  coordinator->stop();
  coordinatorThread.join();
  coordinator.reset();
  auth.reset();
}

std::unique_ptr<WorkerServer> LoopbackCluster::startWorker(zmq::context_t& context,
                                                           ServerSecurity security,
                                                           SessionTypeRegistry& registry) const {
  WorkerConfig config;
  config.coordinator = coordinator->endpoint();
  config.link.heartbeatInterval = 100ms;
  if (options_.tcpOnly) config.localListen.clear();
  config.security = std::move(security);
  config.registrationToken = options_.workerToken;
  return WorkerServer::create(config, registry, context, clock, makeNullLogger("w")).value();
}

std::unique_ptr<client::Client> LoopbackCluster::client(std::optional<ClusterKeys> keys,
                                                        bool forceTcp) const {
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint();
  options.requestTimeout = 20s;  // a refusal must not wait for this
  options.forceTcp = forceTcp;
  options.keys = std::move(keys);
  return client::Client::connect(options).value();
}

}  // namespace kiln::testsupport
