#include "tools/eval/agents.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace kiln::eval {
namespace {

// Keeps the cheapest sequence seen, the shorter one among equals.
struct Best {
  PassSequence passes;
  std::int64_t cost;
  void offer(const PassSequence& candidate, std::int64_t candidateCost) {
    if (candidateCost < cost || (candidateCost == cost && candidate.size() < passes.size())) {
      passes = candidate;
      cost = candidateCost;
    }
  }
};

// Every pass once, in an order drawn from `random`: which pass wins a tie,
// and which ones a budget cuts off, depend on the seed and nothing else.
std::vector<std::int64_t> shuffledPasses(std::int64_t count, std::mt19937_64& random) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), random);
  return order;
}

Result<SearchOutcome> randomSearch(SequenceScorer& scorer, const AgentOptions& options,
                                   std::mt19937_64& random) {
  std::uniform_int_distribution<std::int64_t> pass(0, scorer.passCount() - 1);
  Best best{{}, scorer.initial().cost};
  std::uint64_t queries = 0;
  while (!scorer.exhausted()) {
    PassSequence passes(options.episodeLength);
    for (auto& p : passes) p = pass(random);
    KILN_ASSIGN_OR_RETURN(auto scored, scorer.score(passes));
    ++queries;
    if (scored) best.offer(passes, scored->cost);
  }
  return SearchOutcome{best.passes, best.cost, queries};
}

Result<SearchOutcome> greedySearch(SequenceScorer& scorer, const AgentOptions& options,
                                   std::mt19937_64& random) {
  Best best{{}, scorer.initial().cost};
  std::uint64_t queries = 0;
  PassSequence current;
  while (current.size() < options.maxSequenceLength && !scorer.exhausted()) {
    std::int64_t chosen = -1;
    std::int64_t chosenCost = best.cost;
    for (std::int64_t pass : shuffledPasses(scorer.passCount(), random)) {
      if (scorer.exhausted()) break;
      current.push_back(pass);
      KILN_ASSIGN_OR_RETURN(auto scored, scorer.score(current));
      current.pop_back();
      ++queries;
      if (scored && scored->cost < chosenCost) {
        chosen = pass;
        chosenCost = scored->cost;
      }
    }
    if (chosen < 0) break;  // no pass lowers the cost: greedy has converged
    current.push_back(chosen);
    best.offer(current, chosenCost);
    KILN_RETURN_IF_ERROR(scorer.focus(current));
  }
  return SearchOutcome{best.passes, best.cost, queries};
}

struct BeamState {
  PassSequence passes;
  std::int64_t cost;
};

Result<SearchOutcome> beamSearch(SequenceScorer& scorer, const AgentOptions& options,
                                 std::mt19937_64& random) {
  if (options.beamWidth == 0) return invalidArgument("beam search needs a beam width of 1 or more");
  Best best{{}, scorer.initial().cost};
  std::uint64_t queries = 0;
  std::vector<BeamState> beam{{{}, scorer.initial().cost}};
  // States already reached (by IR fingerprint): a pass that changes nothing,
  // or two orders that give the same module, must not fill the beam twice.
  std::set<std::string> seen{scorer.initial().fingerprint};
  unsigned stale = 0;
  for (unsigned length = 1; length <= options.maxSequenceLength && !scorer.exhausted(); ++length) {
    // Fingerprint -> the first (hence cheapest-to-find) sequence reaching it.
    std::map<std::string, BeamState> next;
    for (const BeamState& parent : beam) {
      for (std::int64_t pass : shuffledPasses(scorer.passCount(), random)) {
        if (scorer.exhausted()) break;
        PassSequence passes = parent.passes;
        passes.push_back(pass);
        KILN_ASSIGN_OR_RETURN(auto scored, scorer.score(passes));
        ++queries;
        if (!scored || seen.contains(scored->fingerprint)) continue;
        next.emplace(scored->fingerprint, BeamState{std::move(passes), scored->cost});
      }
    }
    if (next.empty()) break;
    std::vector<std::pair<std::string, BeamState>> ranked(next.begin(), next.end());
    // Cheapest first; among equals the fingerprint decides, which is stable.
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
      return a.second.cost != b.second.cost ? a.second.cost < b.second.cost : a.first < b.first;
    });
    if (ranked.size() > options.beamWidth) ranked.resize(options.beamWidth);
    std::int64_t before = best.cost;
    beam.clear();
    for (auto& [fingerprint, state] : ranked) {
      seen.insert(fingerprint);
      best.offer(state.passes, state.cost);
      KILN_RETURN_IF_ERROR(scorer.focus(state.passes));
      beam.push_back(std::move(state));
    }
    stale = best.cost < before ? 0 : stale + 1;
    if (stale >= options.patience) break;
  }
  return SearchOutcome{best.passes, best.cost, queries};
}

}  // namespace

Result<SearchOutcome> runAgent(AgentKind kind, SequenceScorer& scorer, const AgentOptions& options,
                               std::uint64_t seed) {
  if (scorer.passCount() <= 0) return invalidArgument("the action space offers no passes");
  std::mt19937_64 random(seed);
  switch (kind) {
    case AgentKind::kRandom:
      if (options.episodeLength == 0) {
        return invalidArgument("random search needs an episode length of 1 or more");
      }
      return randomSearch(scorer, options, random);
    case AgentKind::kGreedy:
      return greedySearch(scorer, options, random);
    case AgentKind::kBeam:
      return beamSearch(scorer, options, random);
  }
  return internalError("unknown agent kind");
}

Result<AgentKind> parseAgentKind(std::string_view name) {
  for (AgentKind kind : {AgentKind::kRandom, AgentKind::kGreedy, AgentKind::kBeam}) {
    if (agentName(kind) == name) return kind;
  }
  return invalidArgument(
      fmt::format("unknown agent '{}'; kiln's agents are random, greedy and beam", name));
}

std::string_view agentName(AgentKind kind) {
  switch (kind) {
    case AgentKind::kRandom:
      return "random";
    case AgentKind::kGreedy:
      return "greedy";
    case AgentKind::kBeam:
      return "beam";
  }
  return "unknown";
}

std::uint64_t benchmarkSeed(std::uint64_t seed, std::string_view benchmark) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (char c : benchmark) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  // splitmix64's finalizer, so that nearby seeds give unrelated streams.
  std::uint64_t z = hash ^ (seed + 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace kiln::eval
