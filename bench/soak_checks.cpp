#include "bench/soak_checks.h"

#include <fmt/format.h>

#include <numeric>

namespace kiln::bench {

namespace {

// Long values (an mlgo feature dict) are cut in the report's notes.
std::string shortly(const Value& value) {
  std::string text = value.describe();
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

// The actions by name where the type names them: what a reproduction needs.
std::string describeActions(client::Client& client, const EndedState& ended) {
  auto spaces = client.getSpaces(ended.options.sessionType);
  const std::vector<std::string>* names =
      spaces.ok() && !spaces->actionSpaces.empty() ? &spaces->actionSpaces[0].names : nullptr;
  std::vector<std::string> listed;
  for (std::int64_t action : ended.actions) {
    const bool named = names != nullptr && action >= 0 && std::size_t(action) < names->size();
    listed.push_back(named ? (*names)[std::size_t(action)] : std::to_string(action));
  }
  return fmt::format("{}", fmt::join(listed, " "));
}

bool isGone(const Status& status) {
  return status.code() == ErrorCode::kDisconnected || status.code() == ErrorCode::kNotFound;
}

}  // namespace

const std::map<std::string, StateCheckKind>& stateCheckKinds() {
  // mlgo-inline: the decisions answered, the decision now pending (its
  // features; zeros once the episode is over) and the size of the result
  // (0 until it is over) are all a session's state the client can see.
  static const std::map<std::string, StateCheckKind> kinds = {
      {"noop", {{"Sum"}, "noop_mismatch", false}},
      {"llvm", {{"IrSha1"}, "llvm_fingerprint_mismatch", true}},
      {"mlgo-inline",
       {{"Decisions", "Features", "NativeSize"}, "mlgo_inline_state_mismatch", true}},
  };
  return kinds;
}

StateChecks::StateChecks(client::Client& client, std::function<std::string()> replayEndpoint)
    : client_(client), replayEndpoint_(std::move(replayEndpoint)) {}

StateChecks::~StateChecks() = default;

void StateChecks::note(const std::string& kind, const std::string& message) {
  for (Problem& seen : problems_) {
    if (seen.kind == kind) {
      ++seen.count;
      return;
    }
  }
  problems_.push_back({kind, message, 1});
}

std::vector<std::string> StateChecks::problems() const {
  std::vector<std::string> lines;
  for (const Problem& problem : problems_) {
    lines.push_back(fmt::format("{} x{}: {}", problem.kind, problem.count, problem.first));
  }
  return lines;
}

void StateChecks::judge(const EndedState& ended, const std::vector<Value>& truth,
                        const std::string& how) {
  const std::string& type = ended.options.sessionType;
  const StateCheckKind& kind = stateCheckKinds().at(type);
  StateCheckCounts& counts = counts_[type];
  ++counts.checked;
  if (truth == ended.observed) return;
  ++counts.mismatched;
  std::vector<std::string> differ;
  for (std::size_t i = 0; i < kind.observations.size(); ++i) {
    const bool both = i < truth.size() && i < ended.observed.size();
    if (both && truth[i] == ended.observed[i]) continue;
    differ.push_back(fmt::format("{} is {}, {} gives {}", kind.observations[i],
                                 i < ended.observed.size() ? shortly(ended.observed[i]) : "missing",
                                 how, i < truth.size() ? shortly(truth[i]) : "missing"));
  }
  note(kind.mismatchField,
       fmt::format("{} after {} actions: {} (actions: {})", ended.options.benchmark,
                   ended.actions.size(), fmt::join(differ, "; "), describeActions(client_, ended)));
}

Result<std::unique_ptr<client::Session>> StateChecks::startReplay(
    const client::SessionOptions& options) {
  const std::string endpoint = replayEndpoint_();
  if (!endpoint.empty()) {
    auto started = client_.startSessionOn(endpoint, options);
    // Down for a moment (restarting after a crash it caught): anywhere else.
    if (started.ok() || !isGone(started.status())) return started;
  }
  return client_.startSession(options);
}

void StateChecks::check(EndedState ended) {
  auto kind = stateCheckKinds().find(ended.options.sessionType);
  if (kind == stateCheckKinds().end()) return;  // a type the soak does not judge
  if (!kind->second.replayed) {
    const std::int64_t sum =
        std::accumulate(ended.actions.begin(), ended.actions.end(), std::int64_t{0});
    judge(ended, {Value(sum)}, "the sum of the actions answered");
    return;
  }
  auto session = startReplay(ended.options);
  if (!session.ok()) {
    ++failed_;
    note(fmt::format("starting a replay of {} ({})", ended.options.sessionType,
                     errorCodeName(session.status().code())),
         session.status().message());
    return;
  }
  Replay replay{std::move(ended), std::move(session).value(), {}};
  std::vector<std::uint32_t> read;
  for (const std::string& name : kind->second.observations) {
    auto index = replay.session->observationIndex(name);
    if (!index.ok()) {
      ++failed_;
      note("reading the state of " + replay.ended.options.sessionType, index.status().message());
      return;
    }
    read.push_back(*index);
  }
  const std::vector<std::uint32_t> none;
  for (std::size_t i = 0; i <= replay.ended.actions.size(); ++i) {
    const bool last = i == replay.ended.actions.size();
    auto sent = last ? replay.session->sendStep({}, read)
                     : replay.session->sendStep({Value(replay.ended.actions[i])}, none);
    // What was sent is still collected; a request not sent shows as a
    // missing answer there.
    if (!sent.ok()) break;
    replay.requests.push_back(*sent);
  }
  replays_.push_back(std::move(replay));
}

void StateChecks::collect() {
  for (Replay& replay : replays_) {
    const std::string& type = replay.ended.options.sessionType;
    Status first = okStatus();
    std::vector<Value> truth;
    for (std::size_t i = 0; i < replay.requests.size(); ++i) {
      auto stepped = replay.session->awaitStep(replay.requests[i]);
      if (!stepped.ok() && first.ok()) {
        first = stepped.status();
        // Ended now, so that the steps behind it fail at once instead of
        // being restored elsewhere.
        (void)replay.session->end();
      }
      if (!stepped.ok()) continue;
      if (i == replay.ended.actions.size()) truth = std::move(stepped->observations);
    }
    if (first.ok() && replay.requests.size() != replay.ended.actions.size() + 1) {
      first = internalError("a step of the replay could not be sent");
    }
    (void)replay.session->end();
    if (first.ok()) {
      judge(replay.ended, truth, "a replay");
    } else if (first.code() == ErrorCode::kCompileError) {
      // The steps it replays were all answered before: a replay that the
      // compiler refuses did not reproduce them.
      ++counts_[type].checked;
      ++counts_[type].mismatched;
      note(stateCheckKinds().at(type).mismatchField + " (the replay got a compile error)",
           fmt::format("{} after {} actions: {} (actions: {})", replay.ended.options.benchmark,
                       replay.ended.actions.size(), first.message(),
                       describeActions(client_, replay.ended)));
    } else {
      ++failed_;
      note(fmt::format("replaying {} ({})", type, errorCodeName(first.code())), first.message());
    }
  }
  replays_.clear();
}

}  // namespace kiln::bench
