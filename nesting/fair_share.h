// Weighted fair sharing of one host's slots between experiments: a TaskQueue
// policy (no threads, no clock), driven by the TaskPool that owns it.
//
// Start-time fair queueing on measured compile time: every experiment has a
// virtual "pass" that grows by (time it ran) / weight; the next task comes
// from the backlogged experiment with the smallest pass, FIFO within it. An
// experiment that comes back from a lull starts at the smallest pass of the
// experiments still active, so it is served at the next free slot (bounded
// delay) but gets no credit for the time it was idle (no burst that starves
// the others). While it is idle the others use every slot.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "worker/task_pool.h"

namespace kiln::nesting {

class WeightedFairQueue final : public TaskQueue {
 public:
  // Weight of an experiment (>= 1; 0 is read as 1). Unknown keys weigh 1.
  void setWeight(const std::string& key, std::uint32_t weight);
  // Drops the state of experiments not in `keep` that have nothing queued or
  // running (released experiments), so the table stays bounded.
  template <class Map>
  void forgetAllBut(const Map& keep) {
    std::erase_if(shares_, [&](const auto& entry) {
      return !keep.contains(entry.first) && !entry.second.active();
    });
  }

  void push(const std::string& key, UniqueTask task) override;
  bool empty() const override { return size_ == 0; }
  std::size_t size() const override { return size_; }
  QueuedTask pop() override;
  void finished(const std::string& key, Duration ran) override;

  // For tests and status: an experiment's virtual pass in seconds/weight.
  double pass(const std::string& key) const;
  std::size_t queued(const std::string& key) const;

 private:
  struct Share {
    std::uint32_t weight = 1;
    double pass = 0;         // service received / weight, in seconds
    double estimate = 1e-3;  // expected seconds per task (EWMA)
    unsigned running = 0;
    std::deque<UniqueTask> tasks;
    bool active() const { return running > 0 || !tasks.empty(); }
  };
  double minActivePass(const Share* except) const;

  std::map<std::string, Share> shares_;
  std::size_t size_ = 0;
  double virtualTime_ = 0;  // pass of the last task started
};

}  // namespace kiln::nesting
