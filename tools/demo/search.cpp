#include "tools/demo/search.h"

#include <fmt/format.h>

#include <limits>

namespace kiln::demo {
namespace {

constexpr const char* kType = "llvm";

struct Root {
  std::unique_ptr<client::Session> session;
  std::int64_t passCount = 0;
  std::int64_t instCount = 0;
  std::int64_t instCountOz = 0;
};

Result<Root> startRoot(client::Client& client, const std::string& benchmark) {
  client::SessionOptions options{kType, benchmark};
  options.actionSpace = "PassesAll";
  options.observations = {"IrInstructionCount", "IrInstructionCountOz"};
  KILN_ASSIGN_OR_RETURN(auto session, client.startSession(options));
  const auto& initial = session->initialObservations();
  if (initial.size() != 2) return internalError("the llvm session returned no initial counts");
  Root root;
  root.passCount = static_cast<std::int64_t>(session->spaces().actionSpaces.at(0).names.size());
  if (root.passCount == 0) return internalError("the llvm session offers no passes");
  root.instCount = initial[0].as<std::int64_t>();
  root.instCountOz = initial[1].as<std::int64_t>();
  root.session = std::move(session);
  return root;
}

constexpr std::int64_t kBroken = std::numeric_limits<std::int64_t>::max();

// Applies `passes` to a fork of `from` and returns the instruction count, or
// kBroken when a pass broke the module (LLVM has such bugs: the worker ends
// that fork with a compile error, and the search just moves on).
Result<std::int64_t> tryOnFork(client::Session& from, const std::vector<std::int64_t>& passes) {
  KILN_ASSIGN_OR_RETURN(auto fork, from.fork());
  std::vector<Value> actions(passes.begin(), passes.end());
  auto stepped = fork->step(actions, std::vector<std::string>{"IrInstructionCount"});
  (void)fork->end();
  if (!stepped.ok()) {
    if (stepped.status().code() == ErrorCode::kCompileError) return kBroken;
    return stepped.status();
  }
  return stepped->observations.at(0).as<std::int64_t>();
}

}  // namespace

const SearchResult& better(const SearchResult& a, const SearchResult& b) {
  if (a.instCount != b.instCount) return a.instCount < b.instCount ? a : b;
  return a.passes.size() <= b.passes.size() ? a : b;
}

Result<SearchResult> randomSearch(client::Client& client, const std::string& benchmark,
                                  const SearchBudget& budget, std::uint64_t seed,
                                  const std::atomic<bool>& cancelled) {
  KILN_ASSIGN_OR_RETURN(Root root, startRoot(client, benchmark));
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::int64_t> pass(0, root.passCount - 1);
  SearchResult best{benchmark, {}, root.instCount, root.instCountOz, 1};
  for (unsigned episode = 0; episode < budget.episodes && !cancelled.load(); ++episode) {
    std::vector<std::int64_t> passes(budget.episodeLength);
    for (auto& p : passes) p = pass(random);
    KILN_ASSIGN_OR_RETURN(std::int64_t count, tryOnFork(*root.session, passes));
    best.steps += 2;
    if (count < best.instCount) {
      best.instCount = count;
      best.passes = std::move(passes);
    }
  }
  KILN_RETURN_IF_ERROR(root.session->end());
  return best;
}

Result<SearchResult> greedySearch(client::Client& client, const std::string& benchmark,
                                  const SearchBudget& budget, std::uint64_t seed,
                                  const std::atomic<bool>& cancelled) {
  KILN_ASSIGN_OR_RETURN(Root root, startRoot(client, benchmark));
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::int64_t> pass(0, root.passCount - 1);
  SearchResult result{benchmark, {}, root.instCount, root.instCountOz, 1};
  for (unsigned step = 0; step < budget.greedySteps && !cancelled.load(); ++step) {
    std::int64_t bestPass = -1;
    std::int64_t bestCount = result.instCount;
    for (unsigned c = 0; c < budget.candidates; ++c) {
      std::int64_t candidate = pass(random);
      KILN_ASSIGN_OR_RETURN(std::int64_t count, tryOnFork(*root.session, {candidate}));
      result.steps += 2;
      if (count < bestCount) {
        bestCount = count;
        bestPass = candidate;
      }
    }
    if (bestPass < 0) continue;  // nothing helped this time; other candidates next time
    KILN_RETURN_IF_ERROR(
        root.session->step({Value(bestPass)}, std::vector<std::string>{}).status());
    ++result.steps;
    result.passes.push_back(bestPass);
    result.instCount = bestCount;
  }
  KILN_RETURN_IF_ERROR(root.session->end());
  return result;
}

}  // namespace kiln::demo
