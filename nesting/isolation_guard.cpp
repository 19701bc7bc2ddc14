#include "nesting/isolation_guard.h"

namespace kiln::nesting {

std::uint64_t extendChain(std::uint64_t chain, char tag, std::string_view bytes) {
  constexpr std::uint64_t kPrime = 1099511628211ull;
  std::uint64_t hash = 14695981039346656037ull;
  auto eat = [&hash](unsigned char byte) { hash = (hash ^ byte) * kPrime; };
  for (int i = 0; i < 8; ++i) eat(static_cast<unsigned char>(chain >> (8 * i)));
  eat(static_cast<unsigned char>(tag));
  for (char c : bytes) eat(static_cast<unsigned char>(c));
  return hash == 0 ? 1 : hash;  // 0 means "unnamed"
}

void ReplayGuard::remember(std::unordered_set<std::uint64_t>& set, std::deque<std::uint64_t>& order,
                           std::uint64_t chain) {
  if (!set.insert(chain).second) return;
  order.push_back(chain);
  while (order.size() > capacity_) {
    set.erase(order.front());
    order.pop_front();
  }
  // Cleared entries leave stale ids in `order`; drop them when it doubles.
  if (order.size() > 2 * set.size() + 16) {
    std::erase_if(order, [&set](std::uint64_t c) { return !set.contains(c); });
  }
}

std::vector<std::uint64_t> ReplayGuard::onDeath(const std::vector<std::uint64_t>& inflight) {
  std::vector<std::uint64_t> named;
  for (std::uint64_t chain : inflight) {
    if (chain != 0) named.push_back(chain);
  }
  std::vector<std::uint64_t> poisonedNow;
  if (named.size() == 1 && suspects_.contains(named[0])) {
    suspects_.erase(named[0]);
    remember(poisoned_, poisonedOrder_, named[0]);
    poisonedNow.push_back(named[0]);
    return poisonedNow;
  }
  for (std::uint64_t chain : named) remember(suspects_, suspectOrder_, chain);
  return poisonedNow;
}

}  // namespace kiln::nesting
