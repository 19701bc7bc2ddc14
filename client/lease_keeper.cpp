#include "client/lease_keeper.h"

#include <capnp/message.h>

#include "common/frame.h"

namespace kiln::client {

LeaseKeeper::LeaseKeeper(zmq::context_t& zmq, RequestIdentity identity, Duration period,
                         std::string alwaysPing, std::optional<ClusterKeys> keys)
    : zmq_(zmq),
      identity_(std::move(identity)),
      period_(period),
      alwaysPing_(std::move(alwaysPing)),
      keys_(std::move(keys)),
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
  std::map<std::string, zmq::socket_t> sockets;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period_, [this] { return stopping_; });
    if (stopping_) break;
    std::vector<std::string> endpoints;
    for (const auto& [endpoint, count] : sessionsByEndpoint_) endpoints.push_back(endpoint);
    if (!alwaysPing_.empty()) endpoints.push_back(alwaysPing_);
    const RequestIdentity identity = identity_;
    lock.unlock();
    for (const std::string& endpoint : endpoints) {
      auto [it, inserted] = sockets.try_emplace(endpoint, zmq_, zmq::socket_type::dealer);
      if (inserted) {
        it->second.set(zmq::sockopt::linger, 0);
        if (keys_) applyCurveClient(it->second, *keys_);
        it->second.connect(endpoint);
      }
      // Replies are read and dropped only to keep the receive queue short.
      zmq::message_t ignored;
      while (it->second.recv(ignored, zmq::recv_flags::dontwait)) {
      }
      capnp::MallocMessageBuilder builder(64);
      auto envelope = initEnvelope(builder, 0);
      identity.stamp(envelope);
      envelope.initRequest().initKeepAlive();
      (void)it->second.send(encodeFrame(builder), zmq::send_flags::dontwait);
    }
    for (auto it = sockets.begin(); it != sockets.end();) {
      bool used = std::find(endpoints.begin(), endpoints.end(), it->first) != endpoints.end();
      it = used ? std::next(it) : sockets.erase(it);
    }
    lock.lock();
  }
}

}  // namespace kiln::client
