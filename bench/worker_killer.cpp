#include "bench/worker_killer.h"

#include <chrono>

namespace kiln::bench {

WorkerKiller::WorkerKiller(ChildCluster& cluster, std::vector<Restartable> targets,
                           KillPacing pacing)
    : cluster_(cluster), targets_(std::move(targets)), pacing_(pacing), random_(pacing.seed) {
  thread_ = std::thread([this] { run(); });
}

void WorkerKiller::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string WorkerKiller::problem() const {
  std::lock_guard lock(mutex_);
  return problem_;
}

std::vector<RunningProcess> WorkerKiller::running() const {
  std::lock_guard lock(mutex_);
  std::vector<RunningProcess> out;
  for (const Restartable& target : targets_) {
    out.push_back({target.label, target.running != nullptr ? target.running->process.pid() : 0});
  }
  return out;
}

void WorkerKiller::run() {
  std::uniform_real_distribution<double> pause(pacing_.minSeconds, pacing_.maxSeconds);
  std::unique_lock lock(mutex_);
  while (!stopping_ && !targets_.empty()) {
    auto wait = std::chrono::milliseconds(static_cast<long>(pause(random_) * 1000));
    if (wake_.wait_for(lock, wait, [this] { return stopping_; })) break;
    Restartable& victim =
        targets_[std::uniform_int_distribution<std::size_t>(0, targets_.size() - 1)(random_)];
    ChildProcess* dead = std::exchange(victim.running, nullptr);
    // Killing and starting take a while: readers of running() need not wait.
    lock.unlock();
    if (dead != nullptr) {
      dead->process.kill();  // SIGKILL and reap
      ++kills_;
      cluster_.retire(dead);
    }
    auto replacement = cluster_.spawn(victim.args);
    lock.lock();
    if (replacement.ok()) {
      victim.running = *replacement;
    } else if (problem_.empty()) {
      problem_ = victim.label + ": " + replacement.status().toString();
    }
  }
}

}  // namespace kiln::bench
