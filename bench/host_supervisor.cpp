#include "bench/host_supervisor.h"

#include <chrono>

#include "common/base/exit_codes.h"

namespace kiln::bench {

namespace {
// How often exits are looked for: a replacement starts well within the
// clients' timeouts, and polling costs one waitpid per host.
constexpr auto kWatchEvery = std::chrono::milliseconds(100);
}  // namespace

HostSupervisor::HostSupervisor(testsupport::ChildCluster& cluster, std::vector<Restartable> hosts,
                               KillPacing pacing)
    : cluster_(cluster), hosts_(std::move(hosts)), pacing_(pacing), random_(pacing.seed) {
  thread_ = std::thread([this] { run(); });
}

void HostSupervisor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string HostSupervisor::problem() const {
  std::lock_guard lock(mutex_);
  return problem_;
}

std::vector<RunningProcess> HostSupervisor::running() const {
  std::lock_guard lock(mutex_);
  std::vector<RunningProcess> out;
  for (const Restartable& host : hosts_) {
    if (host.running == nullptr) {
      out.push_back({host.label, 0, {}});
    } else {
      out.push_back({host.label, host.running->process.pid(), host.running->endpoint});
    }
  }
  return out;
}

void HostSupervisor::run() {
  std::vector<std::size_t> killable;
  for (std::size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i].killable) killable.push_back(i);
  }
  const bool kills = pacing_.enabled && !killable.empty();
  std::uniform_real_distribution<double> pause(pacing_.minSeconds, pacing_.maxSeconds);
  auto nextKill = [&] {
    return std::chrono::steady_clock::now() +
           std::chrono::milliseconds(static_cast<long>(pause(random_) * 1000));
  };
  auto killAt = nextKill();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (wake_.wait_for(lock, kWatchEvery, [this] { return stopping_; })) break;
    restartExited(lock);
    if (!kills || std::chrono::steady_clock::now() < killAt) continue;
    std::size_t victim =
        killable[std::uniform_int_distribution<std::size_t>(0, killable.size() - 1)(random_)];
    replace(hosts_[victim], /*kill=*/true, lock);
    killAt = nextKill();
  }
}

void HostSupervisor::restartExited(std::unique_lock<std::mutex>& lock) {
  for (Restartable& host : hosts_) {
    if (stopping_) return;
    if (host.running == nullptr) continue;
    std::optional<ExitStatus> exited = host.running->process.poll();
    if (!exited) continue;
    if (!exited->signaled() && exited->exitCode == kExitRestartAfterCaughtCrash) {
      ++damageRestarts_;
    } else {
      ++deaths_;
      if (problem_.empty()) problem_ = host.label + " " + exited->describe();
    }
    replace(host, /*kill=*/false, lock);
  }
}

void HostSupervisor::replace(Restartable& host, bool kill, std::unique_lock<std::mutex>& lock) {
  testsupport::ChildProcess* dead = std::exchange(host.running, nullptr);
  // Killing and starting take a while: readers of running() need not wait.
  lock.unlock();
  if (dead != nullptr) {
    if (kill) {
      dead->process.kill();  // SIGKILL and reap
      ++kills_;
    }
    cluster_.retire(dead);
  }
  auto replacement = cluster_.spawn(host.args, host.wrapper);
  lock.lock();
  if (replacement.ok()) {
    host.running = *replacement;
  } else if (problem_.empty()) {
    problem_ = host.label + ": " + replacement.status().toString();
  }
}

}  // namespace kiln::bench
