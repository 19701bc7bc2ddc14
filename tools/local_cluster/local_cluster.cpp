#include "tools/local_cluster/local_cluster.h"

#include <fmt/format.h>

#include "common/metrics/listen_address.h"
#include "nesting/in_process_backend.h"
#include "tools/local_cluster/builtin_types.h"

namespace kiln {

Result<std::unique_ptr<LocalCluster>> LocalCluster::start(LocalClusterOptions options) {
  if (options.workers + options.nestingHosts == 0) {
    return invalidArgument("a local cluster needs at least one worker or nesting host");
  }
  std::unique_ptr<LocalCluster> cluster(new LocalCluster());
  if (options.coordinator.listen == CoordinatorConfig{}.listen) {
    options.coordinator.listen = "tcp://127.0.0.1:0";
  }
  if (options.keys) {
    KILN_ASSIGN_OR_RETURN(
        cluster->authenticator_,
        ZapAuthenticator::start(cluster->zmq_, *options.keys, options.authorizedKeys,
                                makeLogger("auth", options.log)));
    cluster->keys_ = options.keys;
    options.coordinator.security = ServerSecurity{options.keys, cluster->authenticator_.get()};
    options.worker.security = options.coordinator.security;
  }
  // Its own workers register with a token drawn here unless the operator
  // gave one (`kiln local --worker-token-file`); with a key, the key does.
  if (options.coordinator.workerToken.empty() && !options.keys) {
    options.coordinator.workerToken = Secret::draw();
  }
  options.worker.registrationToken = options.coordinator.workerToken;
  KILN_ASSIGN_OR_RETURN(
      cluster->coordinator_,
      CoordinatorServer::create(options.coordinator, cluster->zmq_, cluster->clock_,
                                makeLogger("coordinator", options.log)));
  cluster->coordinatorThread_ = std::thread([c = cluster->coordinator_.get()] { c->run(); });
  for (unsigned i = 0; i < options.workers + options.nestingHosts; ++i) {
    bool nesting = i >= options.workers;
    WorkerSlot slot;
    WorkerConfig config = options.worker;
    config.listen = "tcp://127.0.0.1:0";
    config.coordinator = cluster->coordinator_->endpoint();
    if (nesting) config.mode = nesting::nestingHostMode();
    auto metricsAddress = metrics::parseListenAddress(config.metricsListen);
    if (metricsAddress.ok() && options.workers + options.nestingHosts > 1) {
      // One address for all: each takes a free port of it (workerMetricsPorts()).
      // A bad address is left as it is for the worker to refuse clearly.
      config.metricsListen = metricsAddress->host + ":0";
    }
    std::string name =
        nesting ? fmt::format("nest-{}", i - options.workers) : fmt::format("worker-{}", i);
    if (nesting ? options.isolateNestingHosts : options.isolateWorkers) {
      // Its session types are made in its process (their contexts start
      // threads, which a fork would not carry over).
      WorkerChildSetup setup{config,       options.registerTypes,  options.log,   name,
                             options.keys, options.authorizedKeys, options.drain, {}};
      if (options.onWorkerProcess) {
        setup.onProcessStarted = [hook = options.onWorkerProcess, i](pid_t pid) { hook(i, pid); };
      }
      KILN_ASSIGN_OR_RETURN(slot.child, WorkerChild::start(std::move(setup)));
      cluster->workers_.push_back(std::move(slot));
      continue;
    }
    slot.types = std::make_unique<SessionTypeRegistry>();
    if (options.registerTypes) {
      options.registerTypes(*slot.types);
    } else {
      registerBuiltinSessionTypes(*slot.types);
    }
    KILN_ASSIGN_OR_RETURN(slot.server,
                          WorkerServer::create(config, *slot.types, cluster->zmq_, cluster->clock_,
                                               makeLogger(name, options.log)));
    slot.thread = std::thread([s = slot.server.get()] { s->run(); });
    cluster->workers_.push_back(std::move(slot));
  }
  return cluster;
}

std::vector<std::string> LocalCluster::workerEndpoints() const {
  std::vector<std::string> endpoints;
  for (const WorkerSlot& slot : workers_) {
    endpoints.push_back(slot.child ? slot.child->endpoint() : slot.server->endpoint());
  }
  return endpoints;
}

std::vector<int> LocalCluster::workerMetricsPorts() const {
  std::vector<int> ports;
  for (const WorkerSlot& slot : workers_) {
    ports.push_back(slot.child ? slot.child->metricsPort() : slot.server->metricsPort());
  }
  return ports;
}

std::vector<std::filesystem::path> LocalCluster::workingDirectories() const {
  std::vector<std::filesystem::path> directories;
  for (const WorkerSlot& slot : workers_) {
    if (slot.server) directories.push_back(slot.server->workingDirectory());
  }
  return directories;
}

std::uint64_t LocalCluster::workerRestarts() const {
  std::uint64_t restarts = 0;
  for (const WorkerSlot& slot : workers_) restarts += slot.child ? slot.child->restarts() : 0;
  return restarts;
}

Status LocalCluster::waitUntilReady(Duration timeout) {
  client::ClientOptions options;
  options.coordinator = coordinatorEndpoint();
  options.keys = keys_;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto workers = client->listCluster();
    if (workers.ok() && workers->size() == workers_.size()) return okStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return timeoutError(
      fmt::format("the local cluster's {} workers did not all register in time", workers_.size()));
}

void LocalCluster::stop() {
  for (WorkerSlot& slot : workers_) {
    slot.child.reset();  // killed: nothing of its sessions outlives the cluster
    if (slot.server) slot.server->stop();
  }
  for (WorkerSlot& slot : workers_) {
    if (slot.thread.joinable()) slot.thread.join();
  }
  workers_.clear();
  if (coordinator_) {
    coordinator_->stop();
    if (coordinatorThread_.joinable()) coordinatorThread_.join();
    coordinator_.reset();
  }
}

void LocalCluster::drainAndStop(Duration drain) {
  for (WorkerSlot& slot : workers_) {
    if (slot.server) slot.server->drain(drain);
  }
  for (WorkerSlot& slot : workers_) slot.child.reset();  // SIGTERM: it drains too
  for (WorkerSlot& slot : workers_) {
    if (slot.thread.joinable()) slot.thread.join();  // run() returns once drained
  }
  stop();
}

LocalCluster::~LocalCluster() { stop(); }

Result<EmbeddedClient> connectOrStartLocal(client::ClientOptions options,
                                           LocalClusterOptions local) {
  EmbeddedClient embedded;
  if (options.coordinator.empty()) {
    if (!local.keys) local.keys = options.keys;
    KILN_ASSIGN_OR_RETURN(embedded.cluster, LocalCluster::start(std::move(local)));
    KILN_RETURN_IF_ERROR(embedded.cluster->waitUntilReady(std::chrono::seconds(10)));
    options.coordinator = embedded.cluster->coordinatorEndpoint();
  }
  KILN_ASSIGN_OR_RETURN(embedded.client, client::Client::connect(std::move(options)));
  return embedded;
}

}  // namespace kiln
