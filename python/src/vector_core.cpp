#include "python/src/vector_core.h"

#include <fmt/format.h>

#include "python/src/status_error.h"

namespace kiln::python {
namespace {

// Keeps the entries of `pending` (and of `envOf`, side by side) whose env
// `stillInFlight` says are, in the same order.
template <typename Pending, typename StillInFlight>
void keepInFlight(std::vector<Pending>& pending, std::vector<std::size_t>& envOf,
                  StillInFlight stillInFlight) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (!stillInFlight(envOf[i])) continue;
    pending[kept] = pending[i];
    envOf[kept] = envOf[i];
    ++kept;
  }
  pending.resize(kept);
  envOf.resize(kept);
}

}  // namespace

VectorCore::VectorCore(std::shared_ptr<ClientHandle> client, std::size_t envs)
    : client_(std::move(client)), envs_(envs) {
  if (envs == 0 || envs > 100'000) {
    throw StatusError(
        invalidArgument(fmt::format("num_envs must be in [1, 100000], got {}", envs)));
  }
}

VectorCore::~VectorCore() {
  // Each session's destructor sends its EndSession on the shared client.
  auto endAll = [this](client::Client&) { envs_.clear(); };
  if (PyGILState_Check()) {
    client_->locked(endAll);
  } else {
    envs_.clear();
  }
}

VectorCore::Env& VectorCore::at(std::size_t env) {
  if (env >= envs_.size()) {
    throw StatusError(invalidArgument(
        fmt::format("env id {} is out of range: this vector has {} envs", env, envs_.size())));
  }
  return envs_[env];
}

const VectorCore::Env& VectorCore::at(std::size_t env) const {
  return const_cast<VectorCore*>(this)->at(env);
}

std::vector<Value> VectorCore::start(std::size_t env, const client::SessionOptions& options) {
  Env& slot = at(env);
  auto started = client_->locked([&](client::Client& client) {
    // The old episode's step, if any, is no longer wanted: its session ends.
    dropStep(client, env);
    slot.session.reset();
    return client.startSession(options);
  });
  slot.session = unwrap(std::move(started));
  return slot.session->initialObservations();
}

void VectorCore::checkStartable(const std::vector<std::size_t>& envs,
                                const std::vector<client::SessionOptions>& options) const {
  if (envs.size() != options.size()) {
    throw StatusError(invalidArgument(fmt::format("{} env ids and {} session options: one per env",
                                                  envs.size(), options.size())));
  }
  std::vector<bool> named(envs_.size(), false);
  for (std::size_t env : envs) {
    if (inFlight(env)) {
      throw StatusError(invalidArgument(
          fmt::format("env {} has a step or start in flight: recv() it before starting another "
                      "episode",
                      env)));
    }
    if (named[env]) {
      throw StatusError(invalidArgument(fmt::format("env {} is named twice in one start", env)));
    }
    named[env] = true;
  }
}

void VectorCore::beginStarts(const std::vector<std::size_t>& envs,
                             std::vector<client::SessionOptions> options) {
  checkStartable(envs, options);
  client_->locked([&](client::Client& client) {
    for (std::size_t env : envs) {
      dropStep(client, env);
      envs_[env].session.reset();  // the old episode ends
    }
    std::vector<client::PendingStart> pending = client.beginStarts(std::move(options));
    for (std::size_t i = 0; i < envs.size(); ++i) envs_[envs[i]].starting = std::move(pending[i]);
  });
}

Result<std::vector<Value>> VectorCore::finishStart(client::Client& client, std::size_t env) {
  Env& slot = envs_[env];
  auto started = client.finishStart(*slot.starting);
  slot.starting.reset();
  if (!started.ok()) return started.status();
  slot.session = std::move(started).value();
  return slot.session->initialObservations();
}

void VectorCore::send(const std::vector<std::size_t>& envs,
                      const std::vector<std::vector<Value>>& actions,
                      const std::vector<std::uint32_t>& observations, const Space* actionSpace) {
  if (envs.size() != actions.size()) {
    throw StatusError(invalidArgument(fmt::format(
        "send got {} env ids and {} actions: one action per env", envs.size(), actions.size())));
  }
  // Everything is checked before the first step leaves: a bad call sends nothing.
  std::vector<bool> named(envs_.size(), false);
  for (std::size_t i = 0; i < envs.size(); ++i) {
    const Env& slot = at(envs[i]);
    if (slot.starting) {
      throw StatusError(invalidArgument(fmt::format(
          "env {} is still starting: recv() its first observation before sending it a step",
          envs[i])));
    }
    if (!slot.session) {
      throw StatusError(invalidArgument(
          fmt::format("env {} has no episode: reset it before sending it a step", envs[i])));
    }
    if (inFlight(envs[i])) {
      throw StatusError(invalidArgument(fmt::format(
          "env {} already has a step in flight: recv() its answer before sending another",
          envs[i])));
    }
    if (named[envs[i]]) {
      throw StatusError(invalidArgument(fmt::format("env {} is named twice in one send", envs[i])));
    }
    named[envs[i]] = true;
    if (actionSpace != nullptr) {
      for (const Value& action : actions[i]) throwIfError(actionSpace->check(action));
    }
  }
  client_->locked([&](client::Client&) {
    for (std::size_t i = 0; i < envs.size(); ++i) {
      Env& slot = envs_[envs[i]];
      auto request = slot.session->sendStep(actions[i], observations);
      if (request.ok()) {
        slot.request = *request;
        continue;
      }
      // A step that could not leave (its worker gone and no other for its
      // restore, a full queue) is answered by the next recv() like any other.
      Answer failed;
      failed.env = envs[i];
      failed.status = request.status();
      unsent_.push_back(std::move(failed));
    }
  });
}

std::vector<VectorCore::Answer> VectorCore::recv(std::size_t count, Duration timeout) {
  return client_->locked([&](client::Client& client) {
    std::vector<Answer> answers = std::move(unsent_);
    unsent_.clear();
    if (answers.size() > count) {
      unsent_.assign(std::make_move_iterator(answers.begin() + static_cast<std::ptrdiff_t>(count)),
                     std::make_move_iterator(answers.end()));
      answers.resize(count);
    }
    std::vector<client::PendingStep> steps;
    std::vector<std::size_t> stepEnv;
    std::vector<const client::PendingStart*> starts;
    std::vector<std::size_t> startEnv;
    for (std::size_t env = 0; env < envs_.size(); ++env) {
      if (envs_[env].request) {
        steps.push_back({envs_[env].session.get(), *envs_[env].request});
        stepEnv.push_back(env);
      } else if (envs_[env].starting) {
        starts.push_back(&*envs_[env].starting);
        startEnv.push_back(env);
      }
    }
    count = std::min(count, steps.size() + starts.size() + answers.size());
    const TimePoint until = std::chrono::steady_clock::now() + timeout;
    while (answers.size() < count) {
      client::ReadyReplies ready = client.readyReplies(steps, starts, until);
      if (ready.empty()) break;  // time is up
      for (std::size_t index : ready.starts) {
        if (answers.size() >= count) break;  // the rest stay ready for the next recv()
        Answer answer;
        answer.env = startEnv[index];
        answer.start = true;
        auto initial = finishStart(client, answer.env);
        if (initial.ok()) {
          answer.result.observations = std::move(initial).value();
          answer.result.workerTime = envs_[answer.env].session->startWorkerTime();
        } else {
          answer.status = initial.status();
        }
        answers.push_back(std::move(answer));
      }
      for (std::size_t index : ready.steps) {
        if (answers.size() >= count) break;
        Env& slot = envs_[stepEnv[index]];
        const std::size_t stepsBefore = slot.session->history().steps.size();
        Answer answer;
        answer.env = stepEnv[index];
        auto result = slot.session->awaitStep(*slot.request);
        slot.request.reset();
        if (result.ok()) {
          answer.actionsApplied = result->actionsApplied;
          answer.result = std::move(result).value();
        } else {
          answer.status = result.status();
          const auto& applied = slot.session->history().steps;
          answer.actionsApplied = applied.size() > stepsBefore ? applied.back().size() : 0;
        }
        answers.push_back(std::move(answer));
      }
      // What is still in flight, in the same order.
      keepInFlight(steps, stepEnv, [&](std::size_t env) { return envs_[env].request.has_value(); });
      keepInFlight(starts, startEnv,
                   [&](std::size_t env) { return envs_[env].starting.has_value(); });
    }
    return answers;
  });
}

void VectorCore::end(std::size_t env) {
  Env& slot = at(env);
  if (!slot.session && !slot.starting) return;
  client_->locked([&](client::Client& client) {
    dropStep(client, env);
    slot.session.reset();  // sends EndSession without waiting
  });
}

void VectorCore::dropStep(client::Client& client, std::size_t env) {
  Env& slot = envs_[env];
  slot.request.reset();
  // A start in flight may yet make a session on its worker: it is collected
  // so that the session it made ends, rather than lingering there.
  if (slot.starting) (void)finishStart(client, env);
  std::erase_if(unsent_, [env](const Answer& answer) { return answer.env == env; });
}

bool VectorCore::inFlight(std::size_t env) const {
  if (at(env).request || at(env).starting) return true;
  for (const Answer& answer : unsent_) {
    if (answer.env == env) return true;
  }
  return false;
}

bool VectorCore::hasSession(std::size_t env) const { return at(env).session != nullptr; }

std::string VectorCore::endpoint(std::size_t env) const {
  const Env& slot = at(env);
  return slot.session ? slot.session->endpoint() : std::string();
}

std::size_t VectorCore::inFlightCount() const {
  std::size_t count = 0;
  for (const Env& env : envs_) count += (env.request || env.starting) ? 1 : 0;
  return count + unsent_.size();
}

}  // namespace kiln::python
