// `kiln bench chaos --episodes N`: the differential harness (chaos_bench.h).
#include <fmt/format.h>

#include <random>

#include "bench/chaos_bench.h"
#include "bench/chaos_faults.h"
#include "bench/differential_episodes.h"
#include "bench/soak_sessions.h"

namespace kiln::bench {

namespace {

struct RunOutcome {
  std::vector<EpisodeRecord> records;
  FaultFigures faults;
  std::uint64_t restoredSessions = 0;
  double seconds = 0;
};

// A fresh cluster built for `fault`, and its client.
struct ChaosRun {
  std::unique_ptr<ChaosCluster> cluster;
  std::unique_ptr<client::Client> client;
};

Result<ChaosRun> bringUp(ChaosFault fault, const ChaosClusterOptions& clusterOptions) {
  ChaosRun run;
  KILN_ASSIGN_OR_RETURN(run.cluster, ChaosCluster::create(fault, clusterOptions));
  KILN_ASSIGN_OR_RETURN(run.client, run.cluster->connect());
  return run;
}

// The seeded plans on `run`, with the fault on or off.
Result<RunOutcome> runPlans(ChaosRun& run, bool inject, const std::vector<EpisodePlan>& plans,
                            const RunOptions& runOptions) {
  RunOutcome outcome;
  const auto started = std::chrono::steady_clock::now();
  run.cluster->start(inject);
  auto records = runEpisodes(*run.client, plans, runOptions);
  outcome.faults = run.cluster->stop();
  KILN_RETURN_IF_ERROR(records.status());
  outcome.records = std::move(records).value();
  outcome.restoredSessions = run.client->restoredSessions();
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

// The plans, with the action space read from the workers the runs use.
Result<std::vector<EpisodePlan>> plansFor(const ChaosOptions& o, client::Client& client,
                                          const std::string& crasherAction, std::uint64_t seed) {
  KILN_ASSIGN_OR_RETURN(client::SessionTypeSpaces spaces, client.getSpaces(o.sessionType));
  if (spaces.actionSpaces.empty()) {
    return invalidArgument(fmt::format("'{}' has no action space", o.sessionType));
  }
  const Space& actions = spaces.actionSpaces.front();
  PlanOptions plan;
  plan.seed = seed;
  plan.episodes = o.episodes;
  plan.length = o.episodeLength;
  for (std::size_t i = 0; i < kSmallPrograms.size(); ++i) {
    plan.benchmarks.push_back(chaosBenchmark(o.sessionType, i));
  }
  plan.actionCount = actions.choiceCount();
  // The planted crasher is a fault, not an action an episode draws.
  if (auto crasher = actions.findChoice(crasherAction); crasher.ok()) {
    plan.avoid.push_back(*crasher);
  }
  return planEpisodes(plan);
}

}  // namespace

Result<Report> runChaosDifferential(const ChaosOptions& o, ChaosFigures* out) {
  KILN_ASSIGN_OR_RETURN(ChaosFault fault, parseChaosFault(o.fault));
  const std::vector<ComparedSpace> spaces = defaultComparedSpaces(o.sessionType);
  if (spaces.empty()) {
    return invalidArgument(fmt::format(
        "the harness compares noop, llvm and mlgo-* sessions, not '{}'", o.sessionType));
  }
  const std::uint64_t seed = o.seed != 0 ? o.seed : std::random_device{}();
  ChaosClusterOptions clusterOptions = o.cluster;
  clusterOptions.seed = seed;

  RunOptions runOptions{o.sessionType, spaces, o.sessions};
  if (o.sessionType == "noop" && o.busyMicros > 0) {
    runOptions.parameters.push_back({"noop.busy_us", std::to_string(o.busyMicros)});
  }
  std::vector<EpisodePlan> plans;
  RunOutcome quiet;
  {
    KILN_ASSIGN_OR_RETURN(ChaosRun run, bringUp(fault, clusterOptions));
    KILN_ASSIGN_OR_RETURN(plans, plansFor(o, *run.client, clusterOptions.crasherAction, seed));
    KILN_ASSIGN_OR_RETURN(quiet, runPlans(run, /*inject=*/false, plans, runOptions));
  }  // the quiet cluster is gone before the faulted one starts
  KILN_ASSIGN_OR_RETURN(ChaosRun run, bringUp(fault, clusterOptions));
  KILN_ASSIGN_OR_RETURN(RunOutcome faulted, runPlans(run, /*inject=*/true, plans, runOptions));
  const Comparison compared = compareRuns(quiet.records, faulted.records, spaces);

  ChaosFigures figures;
  figures.episodes = compared.episodes;
  figures.completed = compared.steps;
  figures.comparedValues = compared.values;
  figures.rewardMismatches = compared.rewardMismatches;
  figures.observationMismatches = compared.observationMismatches;
  figures.outcomeMismatches = compared.outcomeMismatches;
  figures.restoredSteps = compared.restoredSteps;
  figures.restored = faulted.restoredSessions;
  figures.kills = faulted.faults.injected;
  figures.diedOnTheirOwn = faulted.faults.diedOnTheirOwn + quiet.faults.diedOnTheirOwn;
  figures.restartsAfterCaughtCrash = faulted.faults.restartsAfterCaughtCrash;
  figures.seconds = faulted.seconds;
  if (out != nullptr) *out = figures;

  Report report;
  report.title = fmt::format(
      "kiln bench chaos: {} episodes of {} sessions, quiet and under '{}', compared step by step",
      o.episodes, o.sessionType, chaosFaultName(fault));
  Row row;
  row.text = {{"fault", std::string(chaosFaultName(fault))}, {"session_type", o.sessionType}};
  row.numbers = {{"episodes", double(compared.episodes)},
                 {"steps_compared", double(compared.steps)},
                 {"values_compared", double(compared.values)},
                 {"reward_mismatches", double(compared.rewardMismatches)},
                 {"observation_mismatches", double(compared.observationMismatches)},
                 {"outcome_mismatches", double(compared.outcomeMismatches)},
                 {"faults_injected", double(faulted.faults.injected)},
                 {"sessions_restored", double(faulted.restoredSessions)},
                 {"steps_after_a_restore", double(compared.restoredSteps)},
                 {"quiet_restores", double(quiet.restoredSessions)},
                 {"workers_died_on_their_own", double(figures.diedOnTheirOwn)},
                 {"restarts_after_caught_crash", double(figures.restartsAfterCaughtCrash)},
                 {"quiet_seconds", quiet.seconds},
                 {"faulted_seconds", faulted.seconds}};
  report.rows.push_back(std::move(row));
  std::string compared_names;
  for (const ComparedSpace& space : spaces) {
    compared_names += (compared_names.empty() ? "" : ", ") + space.name;
  }
  report.notes.push_back(fmt::format(
      "seed {}; {} actions per episode, {} sessions at once on {} {}; the fault: {}, every {}-{} "
      "s; compared at the start and after every step: {} (judged against the quiet run: every "
      "value bit for bit, every episode's course the same)",
      seed, o.episodeLength, o.sessions, fault == ChaosFault::kNestChild ? 1u : o.cluster.workers,
      fault == ChaosFault::kNestChild ? "nesting host" : "workers", chaosFaultDescription(fault),
      o.cluster.minPauseSeconds, o.cluster.maxPauseSeconds, compared_names));
  for (const Mismatch& m : compared.examples) {
    report.notes.push_back(fmt::format("MISMATCH episode {} ({}) step {}: {}: quiet {}, faulted {}",
                                       m.episode, plans[m.episode].benchmark, m.step, m.what,
                                       m.quiet, m.faulted));
  }
  if (faulted.faults.injected == 0) {
    report.notes.push_back("NO FAULT WAS INJECTED: the run proves nothing; " +
                           faulted.faults.problem);
  } else if (!faulted.faults.problem.empty()) {
    report.notes.push_back("fault injection: " + faulted.faults.problem);
  }
  return report;
}

}  // namespace kiln::bench
