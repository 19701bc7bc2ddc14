// The two pass-ordering searches kiln's demo runs, each as one unit of work
// on one benchmark through an `llvm` session (the session type's contract:
// action space "PassesAll", observations "IrInstructionCount" and its
// "IrInstructionCountOz" baseline):
//   random search: many episodes of random pass sequences, each from a fork
//     of the untouched module, keeping the best;
//   greedy search: grow one sequence a pass at a time, each time trying a
//     handful of candidate passes on forks and keeping the one that shrinks
//     the module most, until none helps.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <kiln/client/client.h>

namespace kiln::demo {

struct SearchBudget {
  unsigned episodes = 24;  // random: sequences tried
  unsigned episodeLength = 24;
  unsigned greedySteps = 12;  // greedy: passes chosen at most
  unsigned candidates = 10;   // greedy: passes tried per choice
};

struct SearchResult {
  std::string benchmark;
  std::vector<std::int64_t> passes;  // indices into PassesAll
  std::int64_t instCount = 0;        // after `passes`
  std::int64_t instCountOz = 0;      // -Oz on the same benchmark
  std::uint64_t steps = 0;           // session steps the search took
};

Result<SearchResult> randomSearch(client::Client& client, const std::string& benchmark,
                                  const SearchBudget& budget, std::uint64_t seed,
                                  const std::atomic<bool>& cancelled);
Result<SearchResult> greedySearch(client::Client& client, const std::string& benchmark,
                                  const SearchBudget& budget, std::uint64_t seed,
                                  const std::atomic<bool>& cancelled);

// The better of two results for one benchmark (fewer instructions, then fewer passes).
const SearchResult& better(const SearchResult& a, const SearchResult& b);

}  // namespace kiln::demo
