// The states of recently applied pass lists, kept open so that a call whose
// list starts with one of them applies only the rest (policy: which entry to
// reuse and which to drop; the entries are whatever the executor keeps,
// open sessions there). Keyed by (benchmark, pass prefix); the entry with
// the longest prefix of a list wins; least recently used entries go first
// when there are more than `maxEntries` or their weights (the executor:
// the module's instruction count, a proxy for its bytes on the worker) sum
// over `maxWeight`. Not thread-safe: one caller lane holds it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::agent_tools {

template <class State>
class PrefixCache {
 public:
  using Passes = std::vector<std::int64_t>;

  PrefixCache(std::size_t maxEntries, std::uint64_t maxWeight)
      : maxEntries_(maxEntries < 1 ? 1 : maxEntries), maxWeight_(maxWeight) {}

  // The entry of `benchmark` whose passes are the longest prefix of `passes`
  // (the empty list included), and that prefix's length; null if none.
  State* longestPrefix(const std::string& benchmark, const Passes& passes, std::size_t& length) {
    for (std::size_t k = passes.size() + 1; k-- > 0;) {
      auto it = entries_.find(Key{benchmark, Passes(passes.begin(), passes.begin() + k)});
      if (it != entries_.end()) {
        it->second.lastUse = ++uses_;
        length = k;
        return &it->second.state;
      }
    }
    return nullptr;
  }

  // Keeps `state` for (benchmark, passes), replacing what was there, then
  // drops least recently used entries over the bounds (never this one).
  State& put(const std::string& benchmark, const Passes& passes, State state,
             std::uint64_t weight) {
    Key key{benchmark, passes};
    erase(key);
    Entry& entry = entries_[key];
    entry.state = std::move(state);
    entry.weight = weight;
    entry.lastUse = ++uses_;
    weight_ += weight;
    while (entries_.size() > maxEntries_ || (weight_ > maxWeight_ && entries_.size() > 1)) {
      auto oldest = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->first == key) continue;
        if (oldest == entries_.end() || it->second.lastUse < oldest->second.lastUse) oldest = it;
      }
      if (oldest == entries_.end()) break;
      erase(oldest->first);
    }
    return entries_.at(key).state;
  }

  // Drops the entry for (benchmark, passes), if any (its state went bad).
  void erase(const std::string& benchmark, const Passes& passes) { erase(Key{benchmark, passes}); }

  // Takes out the least recently used half of the entries (at least one),
  // never the one for (benchmark, keep), and gives their states back (for
  // the caller to close): for when the cluster refuses more open states than
  // the cache holds.
  std::vector<State> shed(const std::string& benchmark, const Passes& keep) {
    const Key kept{benchmark, keep};
    std::vector<std::pair<std::uint64_t, Key>> byUse;
    for (const auto& [key, entry] : entries_) {
      if (key != kept) byUse.emplace_back(entry.lastUse, key);
    }
    std::sort(byUse.begin(), byUse.end());
    std::vector<State> shed;
    const std::size_t drop = std::max<std::size_t>(1, byUse.size() / 2);
    for (std::size_t i = 0; i < drop && i < byUse.size(); ++i) {
      auto it = entries_.find(byUse[i].second);
      shed.push_back(std::move(it->second.state));
      erase(byUse[i].second);
    }
    return shed;
  }

  // The (benchmark, passes) of every entry.
  std::set<std::pair<std::string, Passes>> keys() const {
    std::set<std::pair<std::string, Passes>> keys;
    for (const auto& entry : entries_) keys.insert(entry.first);
    return keys;
  }

  std::size_t size() const { return entries_.size(); }
  std::uint64_t weight() const { return weight_; }

 private:
  using Key = std::pair<std::string, Passes>;
  struct Entry {
    State state{};
    std::uint64_t weight = 0;
    std::uint64_t lastUse = 0;
  };
  void erase(const Key& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    weight_ -= it->second.weight;
    entries_.erase(it);
  }

  std::size_t maxEntries_;
  std::uint64_t maxWeight_;
  std::map<Key, Entry> entries_;
  std::uint64_t weight_ = 0;
  std::uint64_t uses_ = 0;
};

}  // namespace kiln::agent_tools
