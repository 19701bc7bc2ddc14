// Why sessions this worker dropped on its own were dropped, for the requests
// that still name them: "not found" alone would not tell a client, or the
// person reading its error, that the session was moved elsewhere on purpose.
// Bounded: the oldest are forgotten first (their requests then get the plain
// "not found").
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace kiln {

class DroppedSessions {
 public:
  explicit DroppedSessions(std::size_t capacity = 65536) : capacity_(capacity) {}

  // `why` is shared by every session of one drop.
  void remember(std::uint64_t session, std::shared_ptr<const std::string> why) {
    if (capacity_ == 0) return;
    if (!why_.contains(session)) order_.push_back(session);
    why_[session] = std::move(why);
    while (order_.size() > capacity_) {
      why_.erase(order_.front());
      order_.pop_front();
    }
  }

  std::optional<std::string> why(std::uint64_t session) const {
    auto found = why_.find(session);
    if (found == why_.end()) return std::nullopt;
    return *found->second;
  }

  std::size_t size() const { return order_.size(); }

 private:
  std::size_t capacity_;
  std::deque<std::uint64_t> order_;
  std::unordered_map<std::uint64_t, std::shared_ptr<const std::string>> why_;
};

}  // namespace kiln
