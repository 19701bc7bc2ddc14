// kiln's built-in search agents over pass orderings: pure policies that see
// a benchmark only through a SequenceScorer (tools/eval/sequence_scorer.h), so the
// same code runs against a kiln llvm session or a made-up cost in a test.
// Each is deterministic for a seed (given a deterministic scorer and a step
// budget: a time budget cuts wherever the clock says):
//   random: random sequences of a fixed length, keeping the best;
//   greedy: CompilerGym's leaderboard greedy: grow one sequence, each time
//     trying every pass and keeping the one that lowers the cost most; stop
//     when none lowers it;
//   beam:   keep the `beamWidth` cheapest distinct states (by IR fingerprint)
//     of each length, extend each by every pass; unlike greedy it crosses
//     plateaus (passes that shrink nothing now but enable others) and stops
//     after `patience` lengths without a new best.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tools/eval/sequence_scorer.h"

namespace kiln::eval {

enum class AgentKind { kRandom, kGreedy, kBeam };

struct AgentOptions {
  unsigned episodeLength = 24;      // random: passes per sequence
  unsigned maxSequenceLength = 64;  // greedy, beam: the longest sequence built
  unsigned beamWidth = 4;
  unsigned patience = 2;  // beam: lengths without a new best before it stops
};

struct SearchOutcome {
  PassSequence best;          // the cheapest sequence found (shortest among equals)
  std::int64_t cost = 0;      // its cost
  std::uint64_t queries = 0;  // sequences scored
};

Result<SearchOutcome> runAgent(AgentKind kind, SequenceScorer& scorer, const AgentOptions& options,
                               std::uint64_t seed);

// "random" | "greedy" | "beam" (invalidArgument naming the known ones otherwise).
Result<AgentKind> parseAgentKind(std::string_view name);
std::string_view agentName(AgentKind kind);

// A per-benchmark seed from the run's seed and the benchmark's URI, so a
// benchmark's result does not depend on which others run beside it.
std::uint64_t benchmarkSeed(std::uint64_t seed, std::string_view benchmark);

}  // namespace kiln::eval
