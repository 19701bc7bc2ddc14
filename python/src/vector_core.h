// kiln.VectorEnv's engine: one session per env on one shared Client, a step
// of every env in flight at once across the cluster, from one Python thread
// (Client::readyReplies: no thread or process per env), answers taken as they
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
  // Starts the next episode of each of `envs` (options[i] for envs[i])
  // without waiting: placed at once (Client::beginStarts), the starts
  // compile in parallel on the workers while the caller goes on, and recv()
  // answers each (Answer::start) like a step. An env is in flight until its
  // start is answered; one whose start failed has no episode.
  void beginStarts(const std::vector<std::size_t>& envs,
                   std::vector<client::SessionOptions> options);
  // Sends a step to each of `envs` (actions[i] to envs[i]): each must have a
  // session and no step in flight. Every action is checked against
  // `actionSpace` (when given) before anything is sent.
  void send(const std::vector<std::size_t>& envs, const std::vector<std::vector<Value>>& actions,
            const std::vector<std::uint32_t>& observations, const Space* actionSpace);

  struct Answer {
    std::size_t env = 0;
    Status status;  // not ok: the step (or start) failed (the result is empty)
    client::StepResult result;
    std::size_t actionsApplied = 0;  // also on failure: they stay applied
    bool start = false;              // a start's answer: result.observations are its first
  };
  // Waits until `count` steps or starts in flight (at most all of them) have
  // their answers or `timeout` passes, and returns at most `count` of them
  // (the first ready); the others stay in flight, their answers kept.
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
    std::optional<std::uint64_t> request;          // the step in flight
    std::optional<client::PendingStart> starting;  // the start in flight
  };
  Env& at(std::size_t env);
  const Env& at(std::size_t env) const;
  // Checks that `envs` are distinct ids of this vector, none with a step or
  // start in flight, one per option.
  void checkStartable(const std::vector<std::size_t>& envs,
                      const std::vector<client::SessionOptions>& options) const;
  // Collects env's start in flight (waiting if it must): its session, or why not.
  Result<std::vector<Value>> finishStart(client::Client& client, std::size_t env);
  // Forgets env's step in flight (its answer will not be wanted), and ends
  // the episode its start in flight would begin.
  void dropStep(client::Client& client, std::size_t env);

  std::shared_ptr<ClientHandle> client_;
  std::vector<Env> envs_;
  std::vector<Answer> unsent_;  // steps that failed before leaving, for recv()
};

}  // namespace kiln::python
