#include "worker/task_pool.h"

namespace kiln {

TaskPool::TaskPool(unsigned threads, std::unique_ptr<TaskQueue> queue) : queue_(std::move(queue)) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void TaskPool::post(const std::string& key, UniqueTask task) {
  {
    std::lock_guard lock(mutex_);
    queue_->push(key, std::move(task));
  }
  wake_.notify_one();
}

unsigned TaskPool::busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

std::size_t TaskPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_->size();
}

std::map<std::string, unsigned> TaskPool::busyByKey() const {
  std::lock_guard lock(mutex_);
  return busyByKey_;
}

void TaskPool::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_->empty(); });
    if (queue_->empty()) return;  // stopping and drained
    QueuedTask next = queue_->pop();
    ++busy_;
    ++busyByKey_[next.key];
    lock.unlock();
    // Accounting uses the real clock on purpose: it measures compile work,
    // which a test's fake clock does not advance.
    auto started = std::chrono::steady_clock::now();
    next.task();
    next.task = UniqueTask();  // release captured state outside the lock
    Duration ran = std::chrono::steady_clock::now() - started;
    lock.lock();
    --busy_;
    if (--busyByKey_[next.key] == 0) busyByKey_.erase(next.key);
    queue_->finished(next.key, ran);
  }
}

}  // namespace kiln
