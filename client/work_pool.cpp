#include <kiln/client/work_pool.h>
#include "client/channel.h"
#include "client/lease_keeper.h"

namespace kiln::client {

Result<std::unique_ptr<WorkPool>> WorkPool::create(ClientOptions options, unsigned runners) {
  if (runners == 0) return invalidArgument("a work pool needs at least one runner");
  std::unique_ptr<WorkPool> pool(new WorkPool(options));
  for (unsigned i = 0; i < runners; ++i) {
    KILN_ASSIGN_OR_RETURN(auto client, Client::connect(options));
    pool->clients_.push_back(std::move(client));
  }
  for (auto& client : pool->clients_) {
    pool->runners_.emplace_back([pool = pool.get(), client = client.get()] { pool->run(*client); });
  }
  return pool;
}

WorkPool::~WorkPool() {
  cancel();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& runner : runners_) runner.join();
}

void WorkPool::enqueue(Unit unit) {
  {
    std::lock_guard lock(mutex_);
    // A new round starts when the previous one was cancelled and drained.
    if (running_ == 0 && queue_.empty()) cancelled_.store(false);
    queue_.push_back(std::move(unit));
  }
  wake_.notify_one();
}

std::size_t WorkPool::cancel() {
  std::deque<Unit> dropped;
  {
    std::lock_guard lock(mutex_);
    cancelled_.store(true);
    dropped.swap(queue_);
  }
  for (Unit& unit : dropped) unit(nullptr);
  idle_.notify_all();
  return dropped.size();
}

void WorkPool::wait() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && running_ == 0; });
}

std::size_t WorkPool::outstanding() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + running_;
}

void WorkPool::run(Client& client) {
  WorkContext context{client, cancelled_};
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Unit unit = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    unit(&context);
    lock.lock();
    --running_;
    if (queue_.empty() && running_ == 0) idle_.notify_all();
  }
}

}  // namespace kiln::client
