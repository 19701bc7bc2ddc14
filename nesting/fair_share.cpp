#include "nesting/fair_share.h"

#include <algorithm>
#include <limits>

namespace kiln::nesting {

void WeightedFairQueue::setWeight(const std::string& key, std::uint32_t weight) {
  shares_[key].weight = std::max<std::uint32_t>(weight, 1);
}

double WeightedFairQueue::minActivePass(const Share* except) const {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& [key, share] : shares_) {
    if (&share != except && share.active()) least = std::min(least, share.pass);
  }
  return least;
}

void WeightedFairQueue::push(const std::string& key, UniqueTask task) {
  Share& share = shares_[key];
  if (!share.active()) {
    // Back from idle: catch up with the others (or with virtual time when
    // nobody else is active), never keep credit from the lull.
    double others = minActivePass(&share);
    double floor = others == std::numeric_limits<double>::infinity() ? virtualTime_ : others;
    share.pass = std::max(share.pass, floor);
  }
  share.tasks.push_back(std::move(task));
  ++size_;
}

QueuedTask WeightedFairQueue::pop() {
  auto chosen = shares_.end();
  for (auto it = shares_.begin(); it != shares_.end(); ++it) {
    if (it->second.tasks.empty()) continue;
    if (chosen == shares_.end() || it->second.pass < chosen->second.pass) chosen = it;
  }
  Share& share = chosen->second;
  QueuedTask next{chosen->first, std::move(share.tasks.front())};
  share.tasks.pop_front();
  --size_;
  ++share.running;
  virtualTime_ = std::max(virtualTime_, share.pass);
  // Charge the expected cost now so that several slots freeing at once do
  // not all pick the same experiment; finished() corrects it.
  share.pass += share.estimate / share.weight;
  return next;
}

void WeightedFairQueue::finished(const std::string& key, Duration ran) {
  auto found = shares_.find(key);
  if (found == shares_.end()) return;
  Share& share = found->second;
  double seconds = std::chrono::duration<double>(ran).count();
  share.pass += (seconds - share.estimate) / share.weight;
  share.estimate = 0.8 * share.estimate + 0.2 * seconds;
  if (share.running > 0) --share.running;
}

double WeightedFairQueue::pass(const std::string& key) const {
  auto found = shares_.find(key);
  return found == shares_.end() ? 0 : found->second.pass;
}

std::size_t WeightedFairQueue::queued(const std::string& key) const {
  auto found = shares_.find(key);
  return found == shares_.end() ? 0 : found->second.tasks.size();
}

}  // namespace kiln::nesting
