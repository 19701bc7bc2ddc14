// Crash-loop protection for an isolating nesting host (policy only).
//
// The host cannot see inside a child, but it sees every request it forwards.
// It names each session request by a hash chain over everything the session
// was sent since it started (type, benchmark, parameters, actions), which a
// replay on a fresh child reproduces exactly, whatever the new session and
// request ids. When a child dies, the requests it was running become
// suspects; a suspect is then run alone on its child (the host holds the
// others back), so if the child dies again the culprit is certain: it is
// poisoned and answered with a compile error, now and whenever sent again.
// A suspect that completes is cleared. Both tables are bounded.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace kiln::nesting {

// FNV-1a over the previous chain value and `bytes`, tagged with the kind of
// request so that, e.g., a parameter and an action of equal bytes differ.
std::uint64_t extendChain(std::uint64_t chain, char tag, std::string_view bytes);

class ReplayGuard {
 public:
  explicit ReplayGuard(std::size_t capacity = 4096) : capacity_(capacity) {}

  bool poisoned(std::uint64_t chain) const { return poisoned_.contains(chain); }
  bool suspect(std::uint64_t chain) const { return suspects_.contains(chain); }
  // A child died running `inflight` (chain 0 = unnamed request, ignored).
  // Returns the chains poisoned by this death: a suspect that ran alone.
  std::vector<std::uint64_t> onDeath(const std::vector<std::uint64_t>& inflight);
  // A suspect ran to completion: it was a bystander.
  void cleared(std::uint64_t chain) { suspects_.erase(chain); }

  std::size_t suspects() const { return suspects_.size(); }

 private:
  void remember(std::unordered_set<std::uint64_t>& set, std::deque<std::uint64_t>& order,
                std::uint64_t chain);

  std::size_t capacity_;
  std::unordered_set<std::uint64_t> suspects_;
  std::deque<std::uint64_t> suspectOrder_;  // oldest first, for the bound
  std::unordered_set<std::uint64_t> poisoned_;
  std::deque<std::uint64_t> poisonedOrder_;
};

}  // namespace kiln::nesting
