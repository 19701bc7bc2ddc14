// The seam between a search agent (tools/eval/agents.h, pure policy) and whatever
// compiles: an agent only asks "what does the benchmark cost after these
// passes, and which state is that?" and "is the budget spent?".
// tools/eval/session_scorer.h answers over a kiln llvm session; tests answer with
// a made-up cost function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln::eval {

using PassSequence = std::vector<std::int64_t>;  // indices into the action space

struct Scored {
  std::int64_t cost = 0;
  // Equal for equal states (the IR's SHA-1 on llvm); empty when the scorer
  // was not asked for fingerprints (agents that need them say so).
  std::string fingerprint;
};

class SequenceScorer {
 public:
  virtual ~SequenceScorer() = default;

  // How many passes the action space offers (actions are 0..passCount()-1).
  virtual std::int64_t passCount() const = 0;
  // The untouched benchmark.
  virtual const Scored& initial() const = 0;
  // The state after applying `passes` to the untouched benchmark, or nullopt
  // when a pass broke the module (LLVM has such bugs; the search moves on).
  // Only failures of the machinery itself are errors.
  virtual Result<std::optional<Scored>> score(const PassSequence& passes) = 0;
  // A hint that the next queries extend `prefix` (greedy search after each
  // choice, beam search for each state it keeps): a scorer may keep that
  // state compiled so that each extension costs one pass. Ignoring it must
  // not change any answer of score().
  virtual Status focus(const PassSequence& prefix) = 0;
  // True once the step or time budget is spent; agents check it before each query.
  virtual bool exhausted() const = 0;
};

}  // namespace kiln::eval
