// Slot tokens: how an isolating nesting host keeps ONE pool budget (its
// slots, shared by experiment weight) across the child processes that run
// its experiments. A child asks for a token before each task and returns it
// after, with the time the task ran; the host grants tokens in the order of
// nesting/fair_share.h's WeightedFairQueue, so fair sharing by measured
// compile time holds as if every experiment ran on the host's own pool.
// Both classes are mechanism-free: no sockets, no threads, no clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/base/mailbox.h"
#include "nesting/fair_share.h"
#include "worker/task_pool.h"

namespace kiln::nesting {

// The host's side: at most `slots` tokens out at once.
class SlotTokens {
 public:
  explicit SlotTokens(unsigned slots) : slots_(slots == 0 ? 1 : slots) {}

  void setWeights(const std::map<std::string, std::uint32_t>& weights);
  // Queues a request of experiment `key`; `grant` runs when a token is its.
  void request(const std::string& key, std::function<void()> grant);
  // A token of `key` came back after its task ran for `ran`.
  void release(const std::string& key, Duration ran);
  // Grants tokens while some are free and requests wait.
  void pump();

  unsigned slots() const { return slots_; }
  unsigned inUse() const { return inUse_; }
  std::size_t waiting() const { return queue_.size(); }

 private:
  unsigned slots_;
  unsigned inUse_ = 0;
  WeightedFairQueue queue_;
};

// A child's event for the host: "I need a token" or "here is one back".
struct TokenEvent {
  bool release = false;
  Duration ran{};
};

// The child's side: the TaskQueue of its pool. A pushed task asks for a
// token (through the mailbox, which the child's loop turns into a message)
// and becomes runnable only when one is granted (TaskPool::withQueue).
class TokenGatedQueue final : public TaskQueue {
 public:
  explicit TokenGatedQueue(Mailbox<TokenEvent>& events) : events_(events) {}

  void push(const std::string& key, UniqueTask task) override;
  bool empty() const override { return tasks_.empty() || granted_ == 0; }
  std::size_t size() const override { return tasks_.size(); }
  QueuedTask pop() override;
  void finished(const std::string& key, Duration ran) override;
  void grant(unsigned tokens) { granted_ += tokens; }
  unsigned granted() const { return granted_; }

 private:
  Mailbox<TokenEvent>& events_;
  std::deque<QueuedTask> tasks_;
  unsigned granted_ = 0;  // tokens held and not yet used by a task
};

}  // namespace kiln::nesting
