// A SequenceScorer over one kiln llvm session (mechanism): the untouched
// benchmark stays open as a root session, and the states of recently scored
// sequences stay open as forks (an LRU of `cachedStates`), so scoring a
// sequence forks the open state with the longest common prefix and applies
// only the rest. States named by focus() are evicted last, so greedy and
// beam search pay one pass per candidate. Budgets
// count passes applied on the worker, like CompilerGym's env steps.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "tools/eval/sequence_scorer.h"

namespace kiln::eval {

struct ScoreBudget {
  std::uint64_t steps = 0;                  // passes applied; 0 = no step budget
  std::chrono::duration<double> seconds{};  // wall time; 0 = no time budget
};

class SessionScorer final : public SequenceScorer {
 public:
  // Starts the root session on `benchmark` (the llvm session type). The
  // client and `cancelled` must outlive the scorer. Without `fingerprints`
  // every Scored::fingerprint is empty and the worker skips hashing the IR
  // (random and greedy search need no fingerprints; beam search does).
  static Result<std::unique_ptr<SessionScorer>> start(
      client::Client& client, const std::string& benchmark, ScoreBudget budget,
      const std::atomic<bool>& cancelled, bool fingerprints = true, std::size_t cachedStates = 16);
  ~SessionScorer() override;

  std::int64_t passCount() const override { return passCount_; }
  const Scored& initial() const override { return initial_; }
  Result<std::optional<Scored>> score(const PassSequence& passes) override;
  Status focus(const PassSequence& prefix) override;
  bool exhausted() const override;

  std::uint64_t stepsUsed() const { return steps_; }

 private:
  struct Open {
    PassSequence passes;
    std::unique_ptr<client::Session> session;
    Scored scored;
    std::uint64_t lastUse = 0;
    bool focused = false;  // asked for by focus(): evicted after the others
  };
  SessionScorer(ScoreBudget budget, const std::atomic<bool>& cancelled, bool fingerprints,
                std::size_t cachedStates)
      : budget_(budget),
        cancelled_(cancelled),
        fingerprints_(fingerprints),
        cachedStates_(std::max<std::size_t>(cachedStates, 1)) {}
  // The open state (root included) whose passes are the longest prefix of `passes`.
  Open& closestOpen(const PassSequence& passes);
  Result<Scored> read(const std::vector<Value>& observed) const;
  Open& keep(Open open);

  ScoreBudget budget_;
  const std::atomic<bool>& cancelled_;
  bool fingerprints_;
  std::size_t cachedStates_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  Open root_;
  std::vector<Open> open_;
  std::vector<std::uint32_t> observed_;  // IrInstructionCount[, IrSha1]
  std::int64_t passCount_ = 0;
  Scored initial_;
  std::uint64_t steps_ = 0;
  std::uint64_t uses_ = 0;
};

}  // namespace kiln::eval
