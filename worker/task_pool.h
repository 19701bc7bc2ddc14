// The pool of threads that runs compile work, sized to the worker's slots.
// Tasks carry a scheduling key (the experiment); the queue discipline is the
// TaskQueue's, so fair sharing between experiments is a policy, not a thread.
// The pool tells the queue how long each task ran, so that a policy can
// account for real compile time rather than task counts.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <kiln/clock.h>
#include "common/base/unique_task.h"

namespace kiln {

struct QueuedTask {
  std::string key;
  UniqueTask task;
};

// Not thread-safe: the pool calls it under its lock.
class TaskQueue {
 public:
  virtual ~TaskQueue() = default;
  virtual void push(const std::string& key, UniqueTask task) = 0;
  virtual bool empty() const = 0;
  virtual std::size_t size() const = 0;
  virtual QueuedTask pop() = 0;  // precondition: !empty()
  // A task popped for `key` finished after running for `ran`.
  virtual void finished(const std::string& key, Duration ran) {}
};

class FifoTaskQueue final : public TaskQueue {
 public:
  void push(const std::string& key, UniqueTask task) override {
    tasks_.push_back({key, std::move(task)});
  }
  bool empty() const override { return tasks_.empty(); }
  std::size_t size() const override { return tasks_.size(); }
  QueuedTask pop() override {
    QueuedTask task = std::move(tasks_.front());
    tasks_.pop_front();
    return task;
  }

 private:
  std::deque<QueuedTask> tasks_;
};

// What one TaskPool::replaceStuck() did.
struct StuckThreads {
  unsigned replaced = 0;  // written off now, each replaced by a new thread
  // Threads past the threshold that keep their slot because the pool
  // already has its maximum of written-off threads still running.
  unsigned held = 0;
};

class TaskPool {
 public:
  // `maxWrittenOff`: how many written-off threads (see replaceStuck()) may
  // still run at once; 0 = as many as `threads`.
  TaskPool(unsigned threads, std::unique_ptr<TaskQueue> queue = std::make_unique<FifoTaskQueue>(),
           unsigned maxWrittenOff = 0);
  ~TaskPool();  // finishes queued tasks, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void post(const std::string& key, UniqueTask task);
  // Runs `change` on the queue under the pool's lock (e.g. to set weights).
  template <class F>
  void withQueue(F&& change) {
    {
      std::lock_guard lock(mutex_);
      change(*queue_);
    }
    wake_.notify_all();  // the change may have made tasks runnable (e.g. a slot token)
  }
  // A thread whose task has run longer than `stuckAfter` is presumed stuck
  // (a compiler that ignores cancel()): it is written off and a new thread
  // takes its slot, so the pool keeps its size. A written-off thread that
  // does finish exits instead of taking more work. Threads must not grow
  // without bound: once maxWrittenOff() written-off threads still run, a
  // stuck thread keeps its slot (counted in `held`) until one returns.
  StuckThreads replaceStuck(Duration stuckAfter);
  // Threads written off by replaceStuck() whose task still runs.
  unsigned stuck() const;
  unsigned maxWrittenOff() const { return maxWrittenOff_; }
  // `held` of the last replaceStuck(): slots lost to stuck tasks for now.
  unsigned heldByStuck() const;
  unsigned threads() const;
  unsigned busy() const;
  std::size_t queued() const;
  bool idle() const;  // nothing runs and nothing waits
  // Threads running a task of each key right now.
  std::map<std::string, unsigned> busyByKey() const;

 private:
  struct Worker {
    std::thread thread;
    std::chrono::steady_clock::time_point started{};
    std::string key;
    bool busy = false;
    bool writtenOff = false;
    bool overdue = false;  // past the threshold, not written off: the cap was reached
    bool exited = false;
  };
  void run(Worker* self);
  void startThread();  // under the lock

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unique_ptr<TaskQueue> queue_;
  unsigned busy_ = 0;
  std::map<std::string, unsigned> busyByKey_;
  bool stopping_ = false;
  const unsigned maxWrittenOff_;
  unsigned held_ = 0;
  std::vector<std::unique_ptr<Worker>> threads_;
};

// What a client whose work waits behind stuck threads is told (and the
// log): empty while no slot is held by a stuck task.
std::string describeStuck(const TaskPool& pool);

}  // namespace kiln
