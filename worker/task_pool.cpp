#include "worker/task_pool.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln {

TaskPool::TaskPool(unsigned threads, std::unique_ptr<TaskQueue> queue, unsigned maxWrittenOff)
    : queue_(std::move(queue)),
      maxWrittenOff_(maxWrittenOff != 0 ? maxWrittenOff : std::max(threads, 1u)) {
  if (threads == 0) threads = 1;
  std::lock_guard lock(mutex_);
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) startThread();
}

TaskPool::~TaskPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  std::unique_lock lock(mutex_);  // `exited` is written under it; joins must not hold it
  for (auto& worker : threads_) {
    // Written off, or kept past the threshold only by the cap, and still in
    // its task: a task that never returns would hang the shutdown forever;
    // the process is ending, so let the thread go.
    const bool stuck = (worker->writtenOff && !worker->exited) || (worker->overdue && worker->busy);
    if (!stuck) {
      lock.unlock();
      worker->thread.join();
      lock.lock();
    } else if (worker->thread.joinable()) {
      worker->thread.detach();
    }
  }
}

void TaskPool::startThread() {
  auto worker = std::make_unique<Worker>();
  Worker* self = worker.get();
  threads_.push_back(std::move(worker));
  self->thread = std::thread([this, self] { run(self); });
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

bool TaskPool::idle() const {
  std::lock_guard lock(mutex_);
  return busy_ == 0 && queue_->empty();
}

std::size_t TaskPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_->size();
}

std::map<std::string, unsigned> TaskPool::busyByKey() const {
  std::lock_guard lock(mutex_);
  return busyByKey_;
}

unsigned TaskPool::threads() const {
  std::lock_guard lock(mutex_);
  unsigned live = 0;
  for (const auto& worker : threads_) live += worker->writtenOff ? 0 : 1;
  return live;
}

unsigned TaskPool::stuck() const {
  std::lock_guard lock(mutex_);
  unsigned stuck = 0;
  for (const auto& worker : threads_) stuck += worker->writtenOff && !worker->exited ? 1 : 0;
  return stuck;
}

unsigned TaskPool::heldByStuck() const {
  std::lock_guard lock(mutex_);
  return held_;
}

StuckThreads TaskPool::replaceStuck(Duration stuckAfter) {
  std::unique_lock lock(mutex_);
  StuckThreads result;
  if (stopping_) return result;
  auto now = std::chrono::steady_clock::now();
  unsigned writtenOff = 0;
  for (const auto& worker : threads_) writtenOff += worker->writtenOff && !worker->exited ? 1 : 0;
  std::size_t count = threads_.size();
  for (std::size_t i = 0; i < count; ++i) {
    Worker& worker = *threads_[i];
    worker.overdue = false;
    if (!worker.busy || worker.writtenOff || now - worker.started < stuckAfter) continue;
    if (writtenOff >= maxWrittenOff_) {
      // Another thread would be one more that may never end: the slot stays
      // lost until a stuck task returns (or the worker is restarted).
      worker.overdue = true;
      ++result.held;
      continue;
    }
    // Its slot is no longer counted as busy: the replacement serves it.
    worker.writtenOff = true;
    ++writtenOff;
    --busy_;
    if (--busyByKey_[worker.key] == 0) busyByKey_.erase(worker.key);
    startThread();
    ++result.replaced;
  }
  held_ = result.held;
  // Reap written-off threads that did finish, so the table stays bounded.
  std::vector<std::thread> finished;
  std::erase_if(threads_, [&](const std::unique_ptr<Worker>& worker) {
    if (!worker->writtenOff || !worker->exited) return false;
    finished.push_back(std::move(worker->thread));
    return true;
  });
  lock.unlock();
  for (auto& thread : finished) thread.join();
  return result;
}

void TaskPool::run(Worker* self) {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_->empty(); });
    if (queue_->empty()) break;  // stopping and drained
    QueuedTask next = queue_->pop();
    ++busy_;
    ++busyByKey_[next.key];
    self->busy = true;
    self->key = next.key;
    self->started = std::chrono::steady_clock::now();
    lock.unlock();
    // Accounting uses the real clock on purpose: it measures compile work,
    // which a test's fake clock does not advance.
    auto started = std::chrono::steady_clock::now();
    next.task();
    next.task = UniqueTask();  // release captured state outside the lock
    Duration ran = std::chrono::steady_clock::now() - started;
    lock.lock();
    self->busy = false;
    queue_->finished(next.key, ran);
    if (self->writtenOff) break;  // replaced while stuck: the pool has its size again
    --busy_;
    if (--busyByKey_[next.key] == 0) busyByKey_.erase(next.key);
  }
  self->exited = true;
}

std::string describeStuck(const TaskPool& pool) {
  const unsigned held = pool.heldByStuck();
  if (held == 0) return {};
  return fmt::format(
      "{} of this worker's {} compile threads are stuck in steps that ignore cancellation, and "
      "the {} stuck threads it already replaced still run (the most it replaces, its slot "
      "count): work waits for the other threads until a stuck step returns or the worker is "
      "restarted",
      held, pool.threads(), pool.stuck());
}

}  // namespace kiln
