// A made-up pass-ordering problem for the search agents, with no compiler:
// cost 100 at the start; pass 1 takes off 10 (three times at most); pass 3
// takes off nothing but "enables" pass 2, which then takes off 30 (twice at
// most); pass 5 breaks the module; every other pass changes nothing. Greedy
// search stops at 70 (pass 3 lowers nothing); a search that crosses that
// plateau reaches 10.
#pragma once

#include <fmt/format.h>
#include <algorithm>

#include "tools/eval/sequence_scorer.h"

namespace kiln::eval {

class FakeScorer final : public SequenceScorer {
 public:
  explicit FakeScorer(std::uint64_t stepBudget, std::int64_t passes = 8)
      : budget_(stepBudget), passes_(passes) {}

  std::int64_t passCount() const override { return passes_; }
  const Scored& initial() const override { return initial_; }
  Result<std::optional<Scored>> score(const PassSequence& sequence) override {
    if (failWith_) return *failWith_;
    steps_ += sequence.size();
    ++queries_;
    int ones = 0, twos = 0;
    bool enabled = false;
    for (std::int64_t pass : sequence) {
      if (pass < 0 || pass >= passes_) return invalidArgument("pass out of range");
      if (pass == 5) return std::optional<Scored>();
      if (pass == 1) ones = std::min(ones + 1, 3);
      if (pass == 3) enabled = true;
      if (pass == 2 && enabled) twos = std::min(twos + 1, 2);
    }
    return std::optional<Scored>(
        Scored{100 - 10 * ones - 30 * twos, fmt::format("{}-{}-{}", ones, twos, enabled)});
  }
  Status focus(const PassSequence&) override { return okStatus(); }
  bool exhausted() const override { return steps_ >= budget_; }

  std::uint64_t steps() const { return steps_; }
  std::uint64_t queries() const { return queries_; }
  void failWith(Status status) { failWith_ = std::move(status); }

 private:
  std::uint64_t budget_;
  std::int64_t passes_;
  Scored initial_{100, "0-0-0"};
  std::uint64_t steps_ = 0;
  std::uint64_t queries_ = 0;
  std::optional<Status> failWith_;
};

}  // namespace kiln::eval
