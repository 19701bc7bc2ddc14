// kiln.VectorEnv's engine: one session per env on one shared Client, a step
// of every env in flight at once across the cluster, from one Python thread
// (Client::readySteps: no thread or process per env), answers taken as they
// come. Python keeps the policy (autoreset, rewards, batching into numpy);
// this is the mechanism. Called with the GIL held; every wait runs without
// it (ClientHandle::locked).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/src/handles.h"

namespace kiln::python {

class VectorCore {
 public:
  VectorCore(std::shared_ptr<ClientHandle> client, std::size_t envs);
  ~VectorCore();  // ends every session (best effort, without waiting)
  VectorCore(const VectorCore&) = delete;
  VectorCore& operator=(const VectorCore&) = delete;

  std::size_t size() const { return envs_.size(); }

  // Starts env's next episode, ending the one it had (a step of the old one
  // still in flight is dropped); its initial observations.
  std::vector<Value> start(std::size_t env, const client::SessionOptions& options);
  // Starts the next episode of each of `envs` (options[i] for envs[i]) at
  // once (Client::startSessions): the starts run in parallel on the
  // workers. Per env, its initial observations or why it did not start
  // (that env then has no episode).
  std::vector<Result<std::vector<Value>>> startMany(
      const std::vector<std::size_t>& envs, const std::vector<client::SessionOptions>& options);
  // Sends a step to each of `envs` (actions[i] to envs[i]): each must have a
  // session and no step in flight. Every action is checked against
  // `actionSpace` (when given) before anything is sent.
  void send(const std::vector<std::size_t>& envs, const std::vector<std::vector<Value>>& actions,
            const std::vector<std::uint32_t>& observations, const Space* actionSpace);

  struct Answer {
    std::size_t env = 0;
    Status status;  // not ok: the step failed (the result is empty)
    client::StepResult result;
    std::size_t actionsApplied = 0;  // also on failure: they stay applied
  };
  // Waits until `count` steps in flight (at most all of them) have their
  // answers or `timeout` passes, and returns at most `count` of them (the
  // first ready); the others stay in flight, their answers kept.
  std::vector<Answer> recv(std::size_t count, Duration timeout);

  // Ends env's episode (its session) if it has one.
  void end(std::size_t env);
  bool inFlight(std::size_t env) const;
  bool hasSession(std::size_t env) const;
  // The worker env's session is on ("" without one).
  std::string endpoint(std::size_t env) const;
  std::size_t inFlightCount() const;

 private:
  struct Env {
    std::unique_ptr<client::Session> session;
    std::optional<std::uint64_t> request;  // the step in flight
  };
  Env& at(std::size_t env);
  const Env& at(std::size_t env) const;
  // Forgets env's step in flight (its answer will not be wanted).
  void dropStep(std::size_t env);

  std::shared_ptr<ClientHandle> client_;
  std::vector<Env> envs_;
  std::vector<Answer> unsent_;  // steps that failed before leaving, for recv()
};

}  // namespace kiln::python
