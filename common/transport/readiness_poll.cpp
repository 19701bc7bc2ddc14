#include "common/transport/readiness_poll.h"

#include <cerrno>

namespace kiln {

void ReadinessPoll::clear() {
  items_.clear();
  fds_.clear();
}

std::size_t ReadinessPoll::addSocket(zmq::socket_t& socket, SocketUse use) {
  return addSocket(socket, socket.get(zmq::sockopt::fd), use);
}

std::size_t ReadinessPoll::addSocket(zmq::socket_t& socket, int descriptor, SocketUse use) {
  items_.push_back({socket.handle(), use == SocketUse::kAny, false});
  fds_.push_back({descriptor, POLLIN, 0});
  return items_.size() - 1;
}

std::size_t ReadinessPoll::addFd(int fd, short events) {
  items_.push_back({nullptr, false, false});
  fds_.push_back({fd, events, 0});
  return items_.size() - 1;
}

bool ReadinessPoll::socketReadable(void* socket) {
  int events = 0;
  std::size_t size = sizeof(events);
  // A socket being closed under us reports nothing rather than throwing.
  if (zmq_getsockopt(socket, ZMQ_EVENTS, &events, &size) != 0) return false;
  return (events & ZMQ_POLLIN) != 0;
}

bool ReadinessPoll::anyDescriptorReadyNow() { return ::poll(fds_.data(), fds_.size(), 0) > 0; }

int ReadinessPoll::wait(std::chrono::milliseconds timeout) {
  int ready = 0;
  for (Item& item : items_) {
    item.ready = item.checkBeforeBlocking && socketReadable(item.socket);
    ready += item.ready ? 1 : 0;
  }
  // Still one poll when a socket is ready: plain descriptors must not starve
  // behind a busy socket.
  int wait = ready > 0 ? 0 : static_cast<int>(timeout.count() < 0 ? -1 : timeout.count());
  int fired = ::poll(fds_.data(), fds_.size(), wait);
  if (fired <= 0) return ready;  // timeout, or EINTR: the caller's loop comes back
  for (std::size_t i = 0; i < items_.size(); ++i) {
    Item& item = items_[i];
    if (item.ready || fds_[i].revents == 0) continue;
    item.ready = item.socket == nullptr || socketReadable(item.socket);
    ready += item.ready ? 1 : 0;
  }
  return ready;
}

}  // namespace kiln
