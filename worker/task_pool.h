// The pool of threads that runs compile work, sized to the worker's slots.
// Tasks carry a scheduling key (the experiment); the queue discipline is the
// TaskQueue's, so fair sharing between experiments is a policy, not a thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_task.h"

namespace kiln {

class TaskQueue {
 public:
  virtual ~TaskQueue() = default;
  virtual void push(const std::string& key, UniqueTask task) = 0;
  virtual bool empty() const = 0;
  virtual std::size_t size() const = 0;
  virtual UniqueTask pop() = 0;  // precondition: !empty()
};

class FifoTaskQueue final : public TaskQueue {
 public:
  void push(const std::string& key, UniqueTask task) override { tasks_.push_back(std::move(task)); }
  bool empty() const override { return tasks_.empty(); }
  std::size_t size() const override { return tasks_.size(); }
  UniqueTask pop() override {
    UniqueTask task = std::move(tasks_.front());
    tasks_.pop_front();
    return task;
  }

 private:
  std::deque<UniqueTask> tasks_;
};

class TaskPool {
 public:
  TaskPool(unsigned threads, std::unique_ptr<TaskQueue> queue = std::make_unique<FifoTaskQueue>());
  ~TaskPool();  // finishes queued tasks, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void post(const std::string& key, UniqueTask task);
  unsigned threads() const { return static_cast<unsigned>(threads_.size()); }
  unsigned busy() const;
  std::size_t queued() const;

 private:
  void run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unique_ptr<TaskQueue> queue_;
  unsigned busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kiln
