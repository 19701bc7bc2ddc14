#include "python/src/handles.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include <kiln/kit/operator_settings.h>
#include "python/src/status_error.h"

namespace kiln::python {

Duration secondsToDuration(double seconds, const char* what) {
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    throw StatusError(invalidArgument(
        fmt::format("{} must be a number of seconds in (0, 86400], got {}", what, seconds)));
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

std::shared_ptr<ClientHandle> ClientHandle::connect(const std::string& endpoint,
                                                    double timeoutSeconds,
                                                    const std::string& experiment,
                                                    const std::string& keyFile,
                                                    const std::string& experimentKey) {
  client::ClientOptions options;
  options.coordinator = endpoint;
  if (!keyFile.empty()) options.keys = unwrap(loadKeyFile(keyFile));
  options.experiment = experiment;
  options.experimentKey = experimentKey;
  options.requestTimeout = secondsToDuration(timeoutSeconds, "timeout");
  auto connected = [&] {
    pybind11::gil_scoped_release noGil;
    return client::Client::connect(std::move(options));
  }();
  return std::shared_ptr<ClientHandle>(new ClientHandle(unwrap(std::move(connected))));
}

client::ExperimentStatus ClientHandle::openExperiment(const ExperimentSpec& spec) {
  return unwrap(locked([&](client::Client& c) { return c.openExperiment(spec); }));
}

client::ExperimentStatus ClientHandle::waitForExperiment(const std::string& name, unsigned workers,
                                                         double timeoutSeconds) {
  Duration timeout = secondsToDuration(timeoutSeconds, "timeout");
  return unwrap(
      locked([&](client::Client& c) { return c.waitForExperiment(name, workers, timeout); }));
}

void ClientHandle::closeExperiment(const std::string& name) {
  Status closed = locked([&](client::Client& c) { return c.closeExperiment(name); });
  if (!closed.ok()) throw StatusError(closed);
}

std::vector<client::ExperimentStatus> ClientHandle::experiments() {
  return unwrap(locked([](client::Client& c) { return c.clusterStatus(); })).experiments;
}

std::vector<client::WorkerStatus> ClientHandle::listCluster() {
  return unwrap(locked([](client::Client& c) { return c.listCluster(); }));
}

client::SessionTypeSpaces ClientHandle::getSpaces(const std::string& sessionType) {
  return unwrap(locked([&](client::Client& c) { return c.getSpaces(sessionType); }));
}

std::unique_ptr<client::Session> ClientHandle::startSession(const client::SessionOptions& options) {
  return unwrap(locked([&](client::Client& c) { return c.startSession(options); }));
}

std::string ClientHandle::workerParameter(const std::string& endpoint, const std::string& key,
                                          const std::string& value) {
  return unwrap(locked([&](client::Client& c) { return c.workerParameter(endpoint, key, value); }));
}

SessionHandle::~SessionHandle() {
  if (!session_) return;
  // Python may drop the last reference from any thread that holds the GIL;
  // give it up while waiting for the client, as every other call does.
  if (PyGILState_Check()) {
    client_->locked([this](client::Client&) { session_.reset(); });
  } else {
    session_.reset();
  }
}

client::StepResult SessionHandle::step(const std::vector<Value>& actions,
                                       const std::vector<std::uint32_t>& observations,
                                       const Space* actionSpace) {
  if (actionSpace != nullptr) {
    for (const Value& action : actions) throwIfError(actionSpace->check(action));
  }
  std::size_t applied = 0;
  auto result = client_->locked([&](client::Client&) {
    const std::size_t stepsBefore = session_->history().steps.size();
    auto stepped = session_->step(actions, observations);
    // An action refused after others of the step ran: the session recorded
    // those (they stay applied), and the caller's own record must too. Read
    // here, before another thread's request of this session can add to it.
    const auto& steps = session_->history().steps;
    if (!stepped.ok() && steps.size() > stepsBefore) applied = steps.back().size();
    return stepped;
  });
  if (result.ok()) return std::move(result).value();
  throw StatusError(result.status(), applied);
}

std::uint64_t SessionHandle::id() {
  return client_->locked([&](client::Client&) { return session_->id().value; });
}

std::string SessionHandle::endpoint() {
  return client_->locked([&](client::Client&) { return session_->endpoint(); });
}

bool SessionHandle::ended() {
  return client_->locked([&](client::Client&) { return session_->ended(); });
}

std::string SessionHandle::compilerVersion() {
  return unwrap(client_->locked([&](client::Client&) { return session_->compilerVersion(); }));
}

std::shared_ptr<SessionHandle> SessionHandle::fork() {
  auto child = unwrap(client_->locked([&](client::Client&) { return session_->fork(); }));
  return std::make_shared<SessionHandle>(client_, std::move(child));
}

void SessionHandle::end() {
  throwIfError(client_->locked([&](client::Client&) { return session_->end(); }));
}

std::string SessionHandle::setParameter(const std::string& key, const std::string& value) {
  return unwrap(
      client_->locked([&](client::Client&) { return session_->setParameter(key, value); }));
}

std::unique_ptr<LocalClusterHandle> LocalClusterHandle::start(
    unsigned workers, unsigned slots, double readySeconds, unsigned nestingHosts,
    const std::vector<std::string>& datasets, bool faultInjection, bool clientTuning) {
  // Bounds keep a typo (workers=10000) from exhausting threads or ports.
  if (nestingHosts > 64) {
    throw StatusError(
        invalidArgument(fmt::format("nesting_hosts must be in [0, 64], got {}", nestingHosts)));
  }
  unsigned minWorkers = nestingHosts == 0 ? 1 : 0;
  if (workers < minWorkers || workers > 64) {
    throw StatusError(invalidArgument(fmt::format(
        "workers must be in [{}, 64]{}, got {}", minWorkers,
        nestingHosts == 0 ? " (a cluster without nesting hosts needs a worker)" : "", workers)));
  }
  if (slots < 1 || slots > 256) {
    throw StatusError(invalidArgument(fmt::format("slots must be in [1, 256], got {}", slots)));
  }
  Duration ready = secondsToDuration(readySeconds, "ready_timeout");
  LocalClusterOptions options;
  options.workers = workers;
  // Compile work in child processes: a crash inside LLVM costs a worker
  // restart (its sessions restore by replay), not this Python process.
  options.isolateWorkers = true;
  options.nestingHosts = nestingHosts;
  options.worker.slots = slots;
  // The caller is the operator of this in-process cluster: its corpora are
  // its own --dataset NAME=DIR values, checked as the CLI checks them.
  for (const std::string& value : datasets) {
    auto parsed = parseDatasetFlag(value, std::filesystem::current_path());
    if (!parsed.ok()) throw StatusError(parsed.status());
    options.worker.settings.datasets.push_back(std::move(*parsed));
  }
  options.worker.settings.faultInjection = faultInjection;
  // --allow-client-tuning: the cluster is this process's alone.
  options.worker.limits.clientTuning = clientTuning;
  if (Status valid = checkOperatorSettings(options.worker.settings); !valid.ok()) {
    throw StatusError(valid);
  }
  pybind11::gil_scoped_release noGil;
  auto cluster = LocalCluster::start(std::move(options));
  if (!cluster.ok()) throw StatusError(cluster.status());
  Status readyStatus = (*cluster)->waitUntilReady(ready);
  if (!readyStatus.ok()) throw StatusError(readyStatus);
  auto handle = std::unique_ptr<LocalClusterHandle>(new LocalClusterHandle(std::move(*cluster)));
  handle->endpoint_ = handle->cluster_->coordinatorEndpoint();
  return handle;
}

LocalClusterHandle::~LocalClusterHandle() {
  if (PyGILState_Check()) {
    pybind11::gil_scoped_release noGil;
    cluster_.reset();
  } else {
    cluster_.reset();
  }
}

std::string LocalClusterHandle::endpoint() const {
  if (!cluster_) throw StatusError(notFound("the local cluster has been stopped"));
  return endpoint_;
}

std::vector<std::string> LocalClusterHandle::workerEndpoints() const {
  if (!cluster_) throw StatusError(notFound("the local cluster has been stopped"));
  return cluster_->workerEndpoints();
}

void LocalClusterHandle::stop() {
  pybind11::gil_scoped_release noGil;
  cluster_.reset();
}

}  // namespace kiln::python
