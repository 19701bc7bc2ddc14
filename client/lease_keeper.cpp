#include "client/lease_keeper.h"

namespace kiln::client {

LeaseKeeper::LeaseKeeper(std::unique_ptr<KeepAliveSender> sender, RequestIdentity identity,
                         Duration period, std::string alwaysPing)
    : sender_(std::move(sender)),
      identity_(std::move(identity)),
      period_(period),
      alwaysPing_(std::move(alwaysPing)),
      thread_([this] { run(); }) {}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LeaseKeeper::setExperimentKey(const Secret& key) {
  std::lock_guard lock(mutex_);
  identity_.experimentKey = key;
}

void LeaseKeeper::setPass(const std::string& endpoint, const WorkerPass& pass) {
  std::lock_guard lock(mutex_);
  identity_.passes[endpoint] = pass;
}

void LeaseKeeper::addNamed(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  identity_.named.insert(endpoint);
}

void LeaseKeeper::addSession(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  ++sessionsByEndpoint_[endpoint];
}

void LeaseKeeper::removeSession(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  auto found = sessionsByEndpoint_.find(endpoint);
  if (found != sessionsByEndpoint_.end() && --found->second <= 0) sessionsByEndpoint_.erase(found);
}

bool LeaseKeeper::hasSessions(const std::string& endpoint) {
  std::lock_guard lock(mutex_);
  return sessionsByEndpoint_.contains(endpoint);
}

void LeaseKeeper::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period_, [this] { return stopping_; });
    if (stopping_) break;
    std::vector<std::string> endpoints;
    for (const auto& [endpoint, count] : sessionsByEndpoint_) endpoints.push_back(endpoint);
    const RequestIdentity identity = identity_;
    lock.unlock();
    sender_->ping(endpoints, alwaysPing_, identity);
    lock.lock();
  }
}

}  // namespace kiln::client
