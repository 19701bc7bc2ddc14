#include "compilers/llvm_engine/validation_campaign.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace kiln::llvm_engine {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kKeptErrors = 10;

// What a state is, for the verdicts already known: its program and its
// identity (its canonical IR's hash while it has none).
Result<std::string> stateKey(std::size_t program, const ModuleState& state) {
  if (const std::optional<StateDigest> identity = state.identity()) {
    return fmt::format("{}:{:02x}", program, fmt::join(*identity, ""));
  }
  KILN_ASSIGN_OR_RETURN(std::string sha1, state.irSha1());
  return fmt::format("{}:ir:{}", program, sha1);
}

// The verdicts of states already checked, shared by the threads: a pass
// that changed nothing, or a prefix checked before, costs no program run.
class VerdictCache {
 public:
  explicit VerdictCache(const BehaviourCheck& check) : check_(check) {}

  void remember(std::string key, Behaviour behaviour) {
    std::lock_guard lock(mutex_);
    verdicts_.insert_or_assign(std::move(key), std::move(behaviour));
  }

  Result<Behaviour> check(std::size_t program, const ModuleState& reference,
                          const ModuleState& candidate) {
    KILN_ASSIGN_OR_RETURN(std::string key, stateKey(program, candidate));
    {
      std::lock_guard lock(mutex_);
      if (auto known = verdicts_.find(key); known != verdicts_.end()) return known->second;
    }
    // Unlocked: two threads may check one state at once, which costs a run
    // but never a wrong verdict.
    ++checks_;
    KILN_ASSIGN_OR_RETURN(Behaviour behaviour, check_(program, reference, candidate));
    remember(std::move(key), behaviour);
    return behaviour;
  }

  std::uint64_t checks() const { return checks_.load(); }

 private:
  const BehaviourCheck& check_;
  std::mutex mutex_;
  std::map<std::string, Behaviour, std::less<>> verdicts_;
  std::atomic<std::uint64_t> checks_{0};
};

// One thread's states: each program parsed once in this thread's contexts,
// every sequence stepped from a clone.
class Stepper {
 public:
  Stepper(std::shared_ptr<const PassTable> table, const std::vector<CampaignProgram>& programs,
          const std::vector<CampaignAction>& actions)
      : table_(std::move(table)), programs_(programs), actions_(actions) {
    starts_.resize(programs.size());
  }

  Result<const ModuleState*> start(std::size_t program) {
    if (!starts_[program]) {
      const CampaignProgram& source = programs_[program];
      auto parsed = ModuleState::fromBitcode(table_, source.bitcode, source.name);
      if (!parsed.ok()) {
        return invalidArgument("campaign program " + source.name + ": " +
                               parsed.status().message());
      }
      starts_[program] = std::move(parsed).value();
    }
    return starts_[program].get();
  }

  Result<std::unique_ptr<ModuleState>> fresh(std::size_t program) {
    KILN_ASSIGN_OR_RETURN(const ModuleState* begin, start(program));
    return begin->clone();
  }

  Result<PassOutcome> apply(ModuleState& state, std::size_t action) const {
    const CampaignAction& chosen = actions_[action];
    return chosen.tableIndex ? state.applyPass(*chosen.tableIndex)
                             : state.applyPipeline(chosen.name);
  }

 private:
  std::shared_ptr<const PassTable> table_;
  const std::vector<CampaignProgram>& programs_;
  const std::vector<CampaignAction>& actions_;
  std::vector<std::unique_ptr<ModuleState>> starts_;
};

// Whether a step that failed was refused before it ran (the state is as it
// was, as the env leaves it) rather than a broken module or an LLVM crash.
bool refused(const ModuleState& state, const Status& status) {
  return state.usable() && status.code() == ErrorCode::kInvalidArgument;
}

struct SequenceOutcome {
  enum class Kind { kNotRun, kPreserved, kMiscompiled, kBroke, kCheckError };
  Kind kind = Kind::kNotRun;
  bool unchanged = false;     // the final state is the program as it came
  std::vector<bool> changed;  // per step
  std::size_t culprit = 0;    // the step that miscompiled or broke
  Behaviour behaviour;        // of the first state that behaved differently
  std::string error;
};

// Runs one sequence and, when its program misbehaves, finds the first step
// after which it does.
class SequenceRunner {
 public:
  SequenceRunner(Stepper& stepper, VerdictCache& verdicts, const std::vector<std::size_t>& runnable)
      : stepper_(stepper), verdicts_(verdicts), runnable_(runnable) {}

  SequenceOutcome run(const CampaignSequence& sequence) {
    SequenceOutcome out;
    const std::size_t program = runnable_[sequence.program];
    auto stepped = steps(program, sequence.actions, out);
    if (!stepped.ok()) return failed(std::move(out), stepped.status());
    if (out.kind == SequenceOutcome::Kind::kBroke) return out;
    std::unique_ptr<ModuleState> state = std::move(stepped).value();

    out.unchanged = std::find(out.changed.begin(), out.changed.end(), true) == out.changed.end();
    auto verdict = check(program, *state);
    if (!verdict.ok()) return failed(std::move(out), verdict.status());
    if (verdict->preserved) {
      out.kind = SequenceOutcome::Kind::kPreserved;
      return out;
    }
    out.kind = SequenceOutcome::Kind::kMiscompiled;
    out.behaviour = std::move(*verdict);
    out.culprit = sequence.actions.size() - 1;
    // Stepped again from the start, checked after every step that changed
    // the module (states checked before cost nothing): the first that
    // misbehaves names the culprit. Not a bisection: a later pass may hide
    // an earlier miscompile again (reg2mem undoing mem2reg's phis).
    auto again = stepper_.fresh(program);
    if (!again.ok()) return failed(std::move(out), again.status());
    for (std::size_t i = 0; i + 1 < sequence.actions.size(); ++i) {
      auto stepped = stepper_.apply(**again, sequence.actions[i]);
      if (!stepped.ok() && !refused(**again, stepped.status())) {
        return failed(std::move(out), stepped.status());
      }
      if (!out.changed[i]) continue;
      auto prefix = check(program, **again);
      if (!prefix.ok()) return failed(std::move(out), prefix.status());
      if (!prefix->preserved) {
        out.culprit = i;
        out.behaviour = std::move(*prefix);
        break;
      }
    }
    return out;
  }

 private:
  static SequenceOutcome failed(SequenceOutcome out, const Status& status) {
    out.kind = SequenceOutcome::Kind::kCheckError;
    out.error = status.message();
    return out;
  }

  Result<Behaviour> check(std::size_t program, const ModuleState& state) {
    KILN_ASSIGN_OR_RETURN(const ModuleState* reference, stepper_.start(program));
    return verdicts_.check(program, *reference, state);
  }

  // The state after every action, each step's change noted in `record`; a
  // step that breaks the module or crashes LLVM ends the sequence (kBroke).
  Result<std::unique_ptr<ModuleState>> steps(std::size_t program,
                                             const std::vector<std::size_t>& actions,
                                             SequenceOutcome& record) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<ModuleState> state, stepper_.fresh(program));
    for (std::size_t i = 0; i < actions.size(); ++i) {
      Result<PassOutcome> outcome = stepper_.apply(*state, actions[i]);
      record.changed.push_back(outcome.ok() && outcome->changed);
      if (outcome.ok() || refused(*state, outcome.status())) continue;
      record.kind = SequenceOutcome::Kind::kBroke;
      record.culprit = i;
      record.error = outcome.status().message();
      break;
    }
    return state;
  }

  Stepper& stepper_;
  VerdictCache& verdicts_;
  const std::vector<std::size_t>& runnable_;
};

// Runs `work(item, thread)` for items 0..count-1 on `threads` threads, in
// order of items, until `stop()` says so.
void parallelFor(std::size_t count, unsigned threads, const std::function<bool()>& stop,
                 const std::function<void(std::size_t, unsigned)>& work) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(threads, 1u); ++t) {
    pool.emplace_back([&, t] {
      for (;;) {
        if (stop()) return;
        const std::size_t item = next++;
        if (item >= count) return;
        work(item, t);
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
}

// Folds the outcomes, in plan order, into the report.
void tally(const std::vector<CampaignSequence>& plan, const std::vector<SequenceOutcome>& outcomes,
           const std::vector<CampaignAction>& actions, const std::vector<CampaignProgram>& programs,
           const std::vector<std::size_t>& runnable, std::size_t keepReproducers,
           ValidationCampaignReport& report) {
  using Kind = SequenceOutcome::Kind;
  for (const CampaignAction& action : actions) {
    report.passes.push_back({action.name, !action.tableIndex});
  }
  for (const SequenceFamily family : kSequenceFamilies) report.families.push_back({family});
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const CampaignSequence& sequence = plan[i];
    const SequenceOutcome& out = outcomes[i];
    switch (out.kind) {
      case Kind::kNotRun:
        continue;
      case Kind::kBroke:
        ++report.broken;
        ++report.passes[sequence.actions[out.culprit]].broke;
        continue;
      case Kind::kCheckError:
        ++report.checkErrors;
        if (report.errors.size() < kKeptErrors) report.errors.push_back(out.error);
        continue;
      case Kind::kPreserved:
      case Kind::kMiscompiled:
        break;
    }
    const bool miscompiled = out.kind == Kind::kMiscompiled;
    ++report.sequences;
    report.unchanged += out.unchanged ? 1 : 0;
    FamilyVerdicts& family = report.families[static_cast<std::size_t>(sequence.family)];
    ++family.sequences;
    const std::size_t last = miscompiled ? out.culprit : sequence.actions.size() - 1;
    std::set<std::size_t> tried, changed;
    for (std::size_t step = 0; step <= last; ++step) {
      tried.insert(sequence.actions[step]);
      if (out.changed[step]) changed.insert(sequence.actions[step]);
    }
    for (const std::size_t action : tried) ++report.passes[action].tried;
    for (const std::size_t action : changed) ++report.passes[action].changed;
    if (!miscompiled) continue;
    ++report.miscompiles;
    ++family.miscompiles;
    ++report.passes[sequence.actions[out.culprit]].miscompiles;
    if (report.reproducers.size() >= keepReproducers) continue;
    Reproducer reproducer{programs[runnable[sequence.program]].name,
                          sequence.family,
                          {},
                          out.behaviour.kind,
                          out.behaviour.message};
    for (std::size_t step = 0; step <= out.culprit; ++step) {
      reproducer.sequence.push_back(actions[sequence.actions[step]].name);
    }
    report.reproducers.push_back(std::move(reproducer));
  }
}

}  // namespace

Result<ValidationCampaignReport> runValidationCampaign(
    const std::shared_ptr<const PassTable>& table, const std::vector<CampaignProgram>& programs,
    const BehaviourCheck& check, const ValidationOptions& options) {
  if (programs.empty()) return invalidArgument("a validation campaign needs at least one program");
  KILN_ASSIGN_OR_RETURN(std::vector<CampaignAction> actions,
                        campaignActions(*table, options.putBack));
  const Clock::time_point begin = Clock::now();
  const unsigned threads = std::max(options.threads, 1u);
  std::vector<Stepper> steppers;
  for (unsigned t = 0; t < threads; ++t) steppers.emplace_back(table, programs, actions);
  // Every program parses (a bad one is the caller's mistake, not a finding).
  for (std::size_t p = 0; p < programs.size(); ++p) {
    KILN_RETURN_IF_ERROR(steppers[0].start(p).status());
  }

  // A program is validated only if it runs and behaves the same as itself.
  VerdictCache verdicts(check);
  std::vector<std::optional<std::string>> exclusion(programs.size());
  parallelFor(
      programs.size(), threads, [] { return false; },
      [&](std::size_t p, unsigned t) {
        auto start = steppers[t].start(p);
        if (!start.ok()) {
          exclusion[p] = start.status().message();
          return;
        }
        auto itself = check(p, **start, **start);
        if (!itself.ok()) {
          exclusion[p] = itself.status().message();
        } else if (!itself->preserved) {
          exclusion[p] =
              fmt::format("it does not behave as itself ({}): {}", itself->kind, itself->message);
        } else if (auto key = stateKey(p, **start); key.ok()) {
          verdicts.remember(std::move(*key), *itself);
        }
      });
  ValidationCampaignReport report;
  std::vector<std::size_t> runnable;
  for (std::size_t p = 0; p < programs.size(); ++p) {
    if (exclusion[p]) {
      report.excluded.push_back({programs[p].name, *exclusion[p]});
    } else {
      runnable.push_back(p);
      report.programs.push_back(programs[p].name);
    }
  }
  if (runnable.empty()) {
    return invalidArgument(fmt::format("no program can be validated (the first: {}: {})",
                                       report.excluded[0].program, report.excluded[0].reason));
  }

  KILN_ASSIGN_OR_RETURN(std::vector<CampaignSequence> plan,
                        planSequences(actions, runnable.size(), options.plan));
  report.planned = plan.size();
  std::vector<SequenceOutcome> outcomes(plan.size());
  const auto outOfTime = [&] {
    return options.timeLimit.count() > 0 && Clock::now() - begin >= options.timeLimit;
  };
  parallelFor(plan.size(), threads, outOfTime, [&](std::size_t i, unsigned t) {
    SequenceRunner runner(steppers[t], verdicts, runnable);
    outcomes[i] = runner.run(plan[i]);
  });
  tally(plan, outcomes, actions, programs, runnable, options.keepReproducers, report);
  report.checks = verdicts.checks();
  report.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return report;
}

}  // namespace kiln::llvm_engine
