// The objects kiln._kiln exposes, as thin owners over the C++ client. A Client
// is single-threaded and Python threads are not, so a ClientHandle serializes
// the use of one Client (and of its Sessions) with a mutex; every blocking
// call gives up the GIL first, so other Python threads (other envs) run.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "tools/local_cluster/local_cluster.h"

namespace kiln::python {

class ClientHandle {
 public:
  // A client of the coordinator at `endpoint` (nothing is sent yet); every
  // request waits at most `timeoutSeconds` for its answer.
  // With an experiment, sessions are placed on that experiment's workers;
  // `experimentKey` (hex) is its key, needed unless this client opens it.
  // With a key file (`kiln keygen`), every connection uses CURVE.
  static std::shared_ptr<ClientHandle> connect(const std::string& endpoint, double timeoutSeconds,
                                               const std::string& experiment,
                                               const std::string& keyFile,
                                               const std::string& experimentKey);

  std::vector<client::WorkerStatus> listCluster();
  client::SessionTypeSpaces getSpaces(const std::string& sessionType);
  std::unique_ptr<client::Session> startSession(const client::SessionOptions& options);
  std::string workerParameter(const std::string& endpoint, const std::string& key,
                              const std::string& value);
  client::ExperimentStatus openExperiment(const ExperimentSpec& spec);
  client::ExperimentStatus waitForExperiment(const std::string& name, unsigned workers,
                                             double timeoutSeconds);
  void closeExperiment(const std::string& name);
  std::vector<client::ExperimentStatus> experiments();
  const std::string& endpoint() const { return client_->options().coordinator; }

  // Runs `op` on the client without the GIL and with the client to itself.
  // The GIL goes first and comes back last: a thread that holds the mutex
  // never waits for the GIL, so the two cannot deadlock.
  template <class Op>
  decltype(auto) locked(Op&& op) {
    pybind11::gil_scoped_release noGil;
    std::lock_guard lock(mutex_);
    return op(*client_);
  }

 private:
  explicit ClientHandle(std::unique_ptr<client::Client> client) : client_(std::move(client)) {}
  std::mutex mutex_;
  std::unique_ptr<client::Client> client_;
};

class SessionHandle {
 public:
  SessionHandle(std::shared_ptr<ClientHandle> client, std::unique_ptr<client::Session> session)
      : client_(std::move(client)), session_(std::move(session)) {}
  ~SessionHandle();  // ends the session (best effort, without waiting)
  SessionHandle(const SessionHandle&) = delete;
  SessionHandle& operator=(const SessionHandle&) = delete;

  // Checks every action against `actionSpace` (when given) before sending,
  // so that a bad action costs no round trip and names what was wrong.
  client::StepResult step(const std::vector<Value>& actions,
                          const std::vector<std::uint32_t>& observations, const Space* actionSpace);
  std::shared_ptr<SessionHandle> fork();
  std::string compilerVersion();
  void end();
  std::string setParameter(const std::string& key, const std::string& value);

  // What a request of this session may change (a restore moves it, an end
  // ends it): read with the client to itself, as another thread may be
  // stepping this session right now.
  std::uint64_t id();
  std::string endpoint();
  bool ended();

  // Only for what never changes after the start (spaces, first observations).
  const client::Session& session() const { return *session_; }
  const std::shared_ptr<ClientHandle>& client() const { return client_; }

 private:
  std::shared_ptr<ClientHandle> client_;  // declared first: outlives the session
  std::unique_ptr<client::Session> session_;
};

class LocalClusterHandle {
 public:
  // `datasets`: "NAME=DIR" values, as `kiln local --dataset` takes them;
  // `faultInjection` as --enable-fault-injection.
  static std::unique_ptr<LocalClusterHandle> start(unsigned workers, unsigned slots,
                                                   double readySeconds, unsigned nestingHosts,
                                                   const std::vector<std::string>& datasets,
                                                   bool faultInjection, bool clientTuning);
  ~LocalClusterHandle();

  std::string endpoint() const;
  std::vector<std::string> workerEndpoints() const;
  bool running() const { return cluster_ != nullptr; }
  void stop();

 private:
  explicit LocalClusterHandle(std::unique_ptr<LocalCluster> cluster)
      : cluster_(std::move(cluster)) {}
  std::unique_ptr<LocalCluster> cluster_;
  std::string endpoint_;
};

// Seconds from Python as a Duration; refuses NaN, <= 0 and over a day.
Duration secondsToDuration(double seconds, const char* what);

}  // namespace kiln::python
