#include "nesting/isolation_tokens.h"

namespace kiln::nesting {

void SlotTokens::setWeights(const std::map<std::string, std::uint32_t>& weights) {
  queue_.forgetAllBut(weights);
  for (const auto& [key, weight] : weights) queue_.setWeight(key, weight);
}

void SlotTokens::request(const std::string& key, std::function<void()> grant) {
  queue_.push(key, [grant = std::move(grant)] { grant(); });
}

void SlotTokens::release(const std::string& key, Duration ran) {
  if (inUse_ > 0) --inUse_;
  queue_.finished(key, ran);
}

void SlotTokens::pump() {
  while (inUse_ < slots_ && !queue_.empty()) {
    QueuedTask next = queue_.pop();
    ++inUse_;
    next.task();
  }
}

void TokenGatedQueue::push(const std::string& key, UniqueTask task) {
  tasks_.push_back({key, std::move(task)});
  events_.push(TokenEvent{false, {}});
}

QueuedTask TokenGatedQueue::pop() {
  --granted_;
  QueuedTask next = std::move(tasks_.front());
  tasks_.pop_front();
  return next;
}

void TokenGatedQueue::finished(const std::string& key, Duration ran) {
  events_.push(TokenEvent{true, ran});
}

}  // namespace kiln::nesting
