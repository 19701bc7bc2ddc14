// An ml-compiler-opt style scheduler over an experiment's workers: submit
// many units of work (an episode, a per-benchmark job), get futures; a fixed
// set of runner threads, each with its own Client (Clients are
// single-threaded), pulls the next unit as soon as it is free, so work goes
// to whichever worker has capacity (the coordinator places each session on
// the least loaded worker of the experiment). At the end of a collection
// round, cancel() drops the units not started (their futures say so) and
// tells running units to stop at their next check; wait() blocks until
// nothing is outstanding.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <kiln/client/client.h>

namespace kiln::client {

// What a running unit sees: its runner's Client and the cancellation flag.
struct WorkContext {
  Client& client;
  const std::atomic<bool>& cancelled;
};

class WorkPool {
 public:
  // `runners` units run at once (e.g. the slots of the experiment's hosts).
  static Result<std::unique_ptr<WorkPool>> create(ClientOptions options, unsigned runners);
  ~WorkPool();  // cancels what is outstanding and joins the runners

  template <class T>
  std::future<Result<T>> submit(std::function<Result<T>(WorkContext&)> work) {
    auto promise = std::make_shared<std::promise<Result<T>>>();
    std::future<Result<T>> future = promise->get_future();
    enqueue([promise, work = std::move(work)](WorkContext* context) {
      if (context == nullptr) {
        promise->set_value(timeoutError("cancelled before it started (end of the round)"));
        return;
      }
      promise->set_value(work(*context));
    });
    return future;
  }

  // Drops queued units and flags running ones; returns how many were dropped.
  std::size_t cancel();
  // Blocks until no unit is queued or running.
  void wait();
  std::size_t outstanding() const;

 private:
  using Unit = std::function<void(WorkContext*)>;  // null context: dropped
  explicit WorkPool(ClientOptions options) : options_(std::move(options)) {}
  void enqueue(Unit unit);
  void run(Client& client);

  ClientOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Unit> queue_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::thread> runners_;
};

}  // namespace kiln::client
