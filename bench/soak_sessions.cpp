#include "bench/soak_sessions.h"

#include <fmt/format.h>

namespace kiln::bench {

namespace {

constexpr std::int64_t kNoopAddActions = 8;  // noop actions 0..7 add themselves to Sum

std::discrete_distribution<std::size_t> typeDistribution(const std::vector<SessionWeight>& mix) {
  std::vector<double> weights;
  for (const SessionWeight& w : mix) weights.push_back(w.weight);
  return std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

}  // namespace

const std::vector<std::string> kSmallPrograms = {"adler32",  "crc32",      "fnv_hash", "sieve",
                                                 "kmp",      "murmur_mix", "rle",      "bfs",
                                                 "heapsort", "quicksort"};

std::string chaosBenchmark(const std::string& sessionType, std::size_t i) {
  if (sessionType == "noop") return fmt::format("benchmark://chaos/{}", i);
  return "benchmark://kiln-bench-v0/" + kSmallPrograms[i % kSmallPrograms.size()];
}

std::int64_t actionCountOf(const client::Session& session) {
  if (session.history().options.sessionType == "noop") return kNoopAddActions;
  const Space& space = session.spaces().actionSpaces.at(0);
  return space.kind == SpaceKind::kNamedDiscrete ? static_cast<std::int64_t>(space.names.size())
                                                 : space.n;
}

SessionSlots::SessionSlots(client::Client& plain, client::Client* nested, SlotPlan plan,
                           std::uint64_t seed, std::function<std::string()> replayEndpoint)
    : plain_(plain),
      nested_(nested),
      plan_(std::move(plan)),
      random_(seed),
      pickType_(typeDistribution(plan_.mix)),
      slots_(plan_.slots),
      checks_(plain, std::move(replayEndpoint)) {}

SessionSlots::~SessionSlots() = default;

client::Client& SessionSlots::clientFor(std::size_t slot) {
  bool onNest = nested_ != nullptr && plan_.nestedShare != 0 &&
                slot % plan_.nestedShare == plan_.nestedShare - 1;
  return onNest ? *nested_ : plain_;
}

void SessionSlots::fail(const std::string& what, const Status& status) {
  // The first of each kind (what failed, with which code) is enough to
  // diagnose; later ones are counted.
  const std::string kind = fmt::format("{} ({})", what, errorCodeName(status.code()));
  for (Failure& seen : failures_) {
    if (seen.kind == kind) {
      ++seen.count;
      return;
    }
  }
  failures_.push_back({kind, status.message(), 1});
}

std::vector<std::string> SessionSlots::failures() const {
  std::vector<std::string> lines;
  for (const Failure& failure : failures_) {
    lines.push_back(fmt::format("{} x{}: {}", failure.kind, failure.count, failure.first));
  }
  for (const std::string& problem : checks_.problems()) lines.push_back(problem);
  return lines;
}

void SessionSlots::countUnanswered(const Slot& slot, const Status& status) {
  if (status.code() != ErrorCode::kCompileError) {
    ++counters_.stepsLost;
    fail("step " + slot.type(), status);
  } else if (slot.session->endedInRestore()) {
    ++counters_.restoreCompileErrors;
    fail("restore compile error " + slot.type(), status);
  } else {
    ++counters_.compileErrors;
    fail("compile error " + slot.type(), status);
  }
}

void SessionSlots::start(std::size_t index) {
  Slot& slot = slots_[index];
  client::SessionOptions options;
  options.sessionType = plan_.mix[pickType_(random_)].type;
  options.benchmark = plan_.benchmarks[std::uniform_int_distribution<std::size_t>(
      0, plan_.benchmarks.size() - 1)(random_)];
  auto session = clientFor(index).startSession(options);
  if (!session.ok()) {
    ++counters_.startsFailed;
    fail("start " + options.sessionType, session.status());
    return;
  }
  slot = Slot{};
  slot.session = std::move(session).value();
  slot.options = std::move(options);
  slot.actionCount = actionCountOf(*slot.session);
  ++counters_.started;
}

void SessionSlots::fork(std::size_t index) {
  Slot& parent = slots_[index];
  auto forked = parent.session->fork();
  if (!forked.ok() && forked.status().code() == ErrorCode::kCompileError) {
    ++counters_.forksRefused;
    fail("fork refused " + parent.type(), forked.status());
    end(index, Ending::kEpisodeOver);
    return;
  }
  if (!forked.ok()) {
    ++counters_.forksFailed;
    fail("fork " + parent.type(), forked.status());
    return;
  }
  ++counters_.forked;
  Slot child;
  child.session = std::move(forked).value();
  child.options = parent.options;
  child.actionCount = parent.actionCount;
  child.applied = parent.applied;
  for (Slot& free : slots_) {
    if (!free.session) {
      free = std::move(child);
      return;
    }
  }
  // No free slot: the fork takes its parent's place, keeping N sessions.
  end(index);
  parent = std::move(child);
}

void SessionSlots::checkState(Slot& slot) {
  auto kind = stateCheckKinds().find(slot.type());
  if (kind == stateCheckKinds().end()) return;
  ++counters_.stepsAttempted;
  auto read = slot.session->step({}, kind->second.observations);
  if (!read.ok()) {
    countUnanswered(slot, read.status());  // no state to check
    return;
  }
  ++counters_.stepsCompleted;
  checks_.check({slot.options, slot.applied, std::move(read->observations)});
}

void SessionSlots::end(std::size_t index, Ending ending) {
  Slot& slot = slots_[index];
  if (ending == Ending::kCheckState) checkState(slot);
  Status ended = slot.session->end();
  // A session its worker ended after a compile error may be unknown there.
  if (ended.ok() || (ending == Ending::kEpisodeOver && ended.code() == ErrorCode::kNotFound)) {
    ++counters_.ended;
  } else {
    ++counters_.endsFailed;
    fail("end " + slot.type(), ended);
  }
  slot = Slot{};
}

void SessionSlots::round() {
  std::uniform_real_distribution<double> chance(0, 1);
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].session) {
      start(i);
      continue;
    }
    double draw = chance(random_);
    if (slots_[i].applied.size() >= plan_.maxStepsPerSession || draw < plan_.endChance) {
      end(i);
    } else if (draw < plan_.endChance + plan_.forkChance) {
      fork(i);
    }
  }
  const std::vector<std::uint32_t> noObservations;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.session) continue;
    slot.pendingAction =
        std::uniform_int_distribution<std::int64_t>(0, slot.actionCount - 1)(random_);
    ++counters_.stepsAttempted;
    auto sent = slot.session->sendStep({Value(slot.pendingAction)}, noObservations);
    if (sent.ok()) {
      slot.pending = *sent;
      continue;
    }
    // A send can restore a session whose worker is known to be gone (and
    // the replay can end it with a compile error) before the step leaves.
    // A step that was not sent leaves the session as it was.
    countUnanswered(slot, sent.status());
    if (sent.status().code() == ErrorCode::kCompileError) end(i, Ending::kEpisodeOver);
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = slots_[i];
    if (!slot.pending) continue;
    auto stepped = slot.session->awaitStep(*slot.pending);
    slot.pending.reset();
    if (!stepped.ok()) {
      countUnanswered(slot, stepped.status());
      // A lost step may or may not have been applied.
      end(i, stepped.status().code() == ErrorCode::kCompileError ? Ending::kEpisodeOver
                                                                 : Ending::kStateUnknown);
      continue;
    }
    ++counters_.stepsCompleted;
    slot.applied.push_back(slot.pendingAction);
    if (stepped->endOfEpisode) {
      ++counters_.episodesFinished;
      end(i);
    }
  }
  checks_.collect();  // the replays sent this round ran beside its steps
}

void SessionSlots::endAll() {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].session) end(i);
  }
  checks_.collect();
}

std::size_t SessionSlots::live() const {
  std::size_t count = 0;
  for (const Slot& slot : slots_) count += slot.session ? 1 : 0;
  return count;
}

}  // namespace kiln::bench
