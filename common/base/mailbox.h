// Hands owned results from worker threads back to a poll loop. The loop polls
// fd() beside its ZeroMQ sockets; a push wakes it only when the mailbox was
// empty, so a burst of completions costs one wake-up.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace kiln {

template <class T>
class Mailbox {
 public:
  Mailbox() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("eventfd failed");  // out of fds: a bug or a leak
  }
  ~Mailbox() { ::close(fd_); }
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  int fd() const { return fd_; }

  void push(T item) {
    bool wasEmpty;
    {
      std::lock_guard lock(mutex_);
      wasEmpty = items_.empty();
      items_.push_back(std::move(item));
    }
    if (wasEmpty) wake();
  }

  // Wakes the loop without an item (e.g. to make it notice a stop request).
  void wake() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof(one));
  }

  // Moves every pending item into `out` (appending) and clears the wake-up.
  void drain(std::vector<T>& out) {
    std::uint64_t count;
    [[maybe_unused]] auto n = ::read(fd_, &count, sizeof(count));
    std::lock_guard lock(mutex_);
    for (auto& item : items_) out.push_back(std::move(item));
    items_.clear();
  }

 private:
  int fd_;
  std::mutex mutex_;
  std::vector<T> items_;
};

}  // namespace kiln
