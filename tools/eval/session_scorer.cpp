#include "tools/eval/session_scorer.h"

#include <algorithm>
#include <tuple>

namespace kiln::eval {
namespace {

bool isPrefix(const PassSequence& prefix, const PassSequence& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

}  // namespace

Result<std::unique_ptr<SessionScorer>> SessionScorer::start(
    client::Client& client, const std::string& benchmark, ScoreBudget budget,
    const std::atomic<bool>& cancelled, bool fingerprints, std::size_t cachedStates) {
  std::unique_ptr<SessionScorer> scorer(
      new SessionScorer(budget, cancelled, fingerprints, cachedStates));
  client::SessionOptions options{"llvm", benchmark};
  options.observations = {"IrInstructionCount"};
  if (fingerprints) options.observations.push_back("IrSha1");
  KILN_ASSIGN_OR_RETURN(auto session, client.startSession(options));
  for (const std::string& name : options.observations) {
    KILN_ASSIGN_OR_RETURN(std::uint32_t index, session->observationIndex(name));
    scorer->observed_.push_back(index);
  }
  KILN_ASSIGN_OR_RETURN(scorer->initial_, scorer->read(session->initialObservations()));
  const auto& spaces = session->spaces().actionSpaces;
  scorer->passCount_ = spaces.empty() ? 0 : static_cast<std::int64_t>(spaces[0].names.size());
  scorer->root_ = Open{{}, std::move(session), scorer->initial_, 0};
  return scorer;
}

Result<Scored> SessionScorer::read(const std::vector<Value>& observed) const {
  bool wellFormed = observed.size() == observed_.size() && observed[0].is<std::int64_t>() &&
                    (!fingerprints_ || observed[1].is<std::string>());
  if (!wellFormed) {
    return internalError("the llvm session did not return the IR instruction count it was asked");
  }
  return Scored{observed[0].as<std::int64_t>(),
                fingerprints_ ? observed[1].as<std::string>() : std::string()};
}

SessionScorer::~SessionScorer() = default;  // sessions end without waiting for the answers

bool SessionScorer::exhausted() const {
  if (cancelled_.load()) return true;
  if (budget_.steps != 0 && steps_ >= budget_.steps) return true;
  return budget_.seconds.count() > 0 &&
         std::chrono::steady_clock::now() - started_ >= budget_.seconds;
}

SessionScorer::Open& SessionScorer::closestOpen(const PassSequence& passes) {
  Open* closest = &root_;
  for (Open& open : open_) {
    if (open.passes.size() > closest->passes.size() && isPrefix(open.passes, passes)) {
      closest = &open;
    }
  }
  return *closest;
}

SessionScorer::Open& SessionScorer::keep(Open open) {
  if (open_.size() < cachedStates_) return open_.emplace_back(std::move(open));
  // The least recently used state, one not focused if there is one.
  auto evicted = std::min_element(open_.begin(), open_.end(), [](const Open& a, const Open& b) {
    return std::tie(a.focused, a.lastUse) < std::tie(b.focused, b.lastUse);
  });
  *evicted = std::move(open);  // the evicted fork's session ends as it is dropped
  return *evicted;
}

Result<std::optional<Scored>> SessionScorer::score(const PassSequence& passes) {
  Open& from = closestOpen(passes);
  from.lastUse = ++uses_;
  if (from.passes.size() == passes.size()) return std::optional<Scored>(from.scored);
  KILN_ASSIGN_OR_RETURN(auto fork, from.session->fork());
  std::vector<Value> rest(passes.begin() + static_cast<std::ptrdiff_t>(from.passes.size()),
                          passes.end());
  steps_ += rest.size();
  auto stepped = fork->step(rest, observed_);
  if (!stepped.ok()) {
    // A pass broke the module: the worker has ended the fork.
    if (stepped.status().code() == ErrorCode::kCompileError) return std::optional<Scored>();
    return stepped.status();
  }
  KILN_ASSIGN_OR_RETURN(Scored scored, read(stepped->observations));
  keep(Open{passes, std::move(fork), scored, ++uses_});
  return std::optional<Scored>(scored);
}

Status SessionScorer::focus(const PassSequence& prefix) {
  KILN_RETURN_IF_ERROR(score(prefix).status());  // opens the state if it is not
  for (Open& open : open_) {
    if (open.passes == prefix) open.focused = true;
  }
  return okStatus();
}

}  // namespace kiln::eval
