#include "bench/chaos_bench.h"

#include <fmt/format.h>

#include <random>

#include <kiln/client/client.h>
#include "bench/host_supervisor.h"
#include "bench/kiln_executable.h"
#include "bench/soak_sessions.h"
#include "client/session_codec.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

using namespace std::chrono_literals;

namespace {

// What a step's reward must be, from what the step did: noop's Reward:Sum is
// the action added to the sum; llvm's Reward:IrInstructionCount is the drop
// of the instruction count since the previous step (every step asks for both).
struct RewardCheck {
  std::vector<std::string> spaces;  // asked at the start and at every step
  bool holds(bool noop, std::int64_t action, std::int64_t& count,
             const std::vector<Value>& observed) const {
    // Noop's actions 0-7 add themselves; the others add nothing.
    if (noop) return observed.at(0).as<std::int64_t>() == (action < 8 ? action : 0);
    const std::int64_t now = observed.at(0).as<std::int64_t>();
    const double reward = observed.at(1).as<double>();
    const bool right = reward == static_cast<double>(count - now);
    count = now;
    return right;
  }
};

}  // namespace

Result<Report> runChaosBench(const ChaosOptions& options, ChaosFigures* out) {
  if (options.episodes > 0) return runChaosDifferential(options, out);
  if (options.sessions == 0 || options.cluster.workers < 2) {
    return invalidArgument("chaos needs at least 1 session and 2 workers (one may be down)");
  }
  if (options.cluster.minPauseSeconds <= 0 ||
      options.cluster.maxPauseSeconds < options.cluster.minPauseSeconds) {
    return invalidArgument(fmt::format("kill interval [{}, {}] s is not a positive range",
                                       options.cluster.minPauseSeconds,
                                       options.cluster.maxPauseSeconds));
  }
  if (options.sessionType != "noop" && options.sessionType != "llvm") {
    return invalidArgument(
        fmt::format("chaos steps noop or llvm sessions, not '{}'", options.sessionType));
  }
  if (options.cluster.heartbeatSeconds <= 0) {
    return invalidArgument("the heartbeat interval must be positive");
  }
  std::uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
  const std::string heartbeat = fmt::format("{}", options.cluster.heartbeatSeconds);
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(kilnExecutable()));
  KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * coordinator,
                        cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0",
                                       "--heartbeat-seconds", heartbeat, "--log-level", "off"}));
  std::vector<Restartable> workers;
  for (unsigned i = 0; i < options.cluster.workers; ++i) {
    Restartable worker{fmt::format("worker-{}", i),
                       {"worker", "--coordinator", coordinator->endpoint, "--slots",
                        std::to_string(options.cluster.slots), "--heartbeat-seconds", heartbeat,
                        "--log-level", "off", "--listen", "tcp://127.0.0.1:0"}};
    KILN_ASSIGN_OR_RETURN(worker.running, cluster.spawn(worker.args));
    // Its replacements bind the port it was given.
    if (options.sameEndpoints) worker.args.back() = worker.running->endpoint;
    workers.push_back(std::move(worker));
  }
  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator->endpoint;
  if (options.cluster.requestSeconds > 0) {
    clientOptions.requestTimeout = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(options.cluster.requestSeconds));
  }
  clientOptions.leasePeriod = 500ms;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(clientOptions));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*client, options.cluster.workers, 10s));
  const bool noop = options.sessionType == "noop";
  const RewardCheck rewards{
      noop ? std::vector<std::string>{"Reward:Sum"}
           : std::vector<std::string>{"IrInstructionCount", "Reward:IrInstructionCount"}};
  std::vector<std::unique_ptr<client::Session>> sessions;
  std::vector<std::int64_t> counts;  // llvm: each session's instruction count now
  for (unsigned i = 0; i < options.sessions; ++i) {
    client::SessionOptions start{options.sessionType, chaosBenchmark(options.sessionType, i)};
    start.observations = rewards.spaces;
    KILN_ASSIGN_OR_RETURN(auto session, client->startSession(start));
    counts.push_back(session->initialObservations().at(0).as<std::int64_t>());
    sessions.push_back(std::move(session));
  }
  KILN_ASSIGN_OR_RETURN(auto asked, observationIndices(sessions.front()->spaces(), rewards.spaces));
  const std::int64_t actions = actionCountOf(*sessions.front());
  std::mt19937_64 random(seed);

  ChaosFigures figures;
  std::vector<std::int64_t> expected(sessions.size(), 0);
  std::vector<bool> broken(sessions.size(), false);
  std::string firstLoss;
  auto started = std::chrono::steady_clock::now();
  auto until = started + std::chrono::milliseconds(static_cast<long>(options.seconds * 1000));
  {
    HostSupervisor chaos(cluster, std::move(workers),
                         {options.cluster.minPauseSeconds, options.cluster.maxPauseSeconds, seed});
    for (std::uint64_t round = 0; std::chrono::steady_clock::now() < until; ++round) {
      std::vector<std::optional<std::uint64_t>> sent(sessions.size());
      std::vector<std::int64_t> actionOf(sessions.size(), 0);
      for (std::size_t i = 0; i < sessions.size(); ++i) {
        if (broken[i]) continue;
        auto action = noop ? static_cast<std::int64_t>((round + i) % 8)
                           : std::uniform_int_distribution<std::int64_t>(0, actions - 1)(random);
        ++figures.attempted;
        actionOf[i] = action;
        auto id = sessions[i]->sendStep({Value(action)}, asked);
        if (!id.ok()) {
          ++figures.lost;
          broken[i] = true;
          if (firstLoss.empty()) firstLoss = id.status().toString();
          continue;
        }
        sent[i] = *id;
        expected[i] += action;
      }
      for (std::size_t i = 0; i < sessions.size(); ++i) {
        if (!sent[i]) continue;
        auto stepped = sessions[i]->awaitStep(*sent[i]);
        if (stepped.ok()) {
          ++figures.completed;
          if (!rewards.holds(noop, actionOf[i], counts[i], stepped->observations)) {
            ++figures.rewardMismatches;
          }
          continue;
        }
        broken[i] = true;
        if (stepped.status().code() == ErrorCode::kCompileError) {
          ++figures.compileErrors;  // the episode is over, nothing was lost
          continue;
        }
        ++figures.lost;
        broken[i] = true;  // its history no longer matches what we sent
        if (firstLoss.empty()) firstLoss = stepped.status().toString();
      }
    }
    chaos.stop();
    figures.kills = chaos.kills();
    figures.diedOnTheirOwn = chaos.unexpectedDeaths();
    figures.restartsAfterCaughtCrash = chaos.restartsAfterCaughtCrash();
    if (!chaos.problem().empty() && firstLoss.empty()) firstLoss = chaos.problem();
  }
  figures.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The state must be exactly what was sent: every completed step applied once.
  for (std::size_t i = 0; i < sessions.size() && noop; ++i) {
    if (broken[i]) continue;
    auto sum = sessions[i]->step({}, std::vector<std::string>{"Sum"});
    if (!sum.ok() || sum->observations[0].as<std::int64_t>() != expected[i]) ++figures.mismatched;
  }
  figures.restored = client->restoredSessions();
  if (out != nullptr) *out = figures;

  Report report;
  report.title = fmt::format("kiln bench chaos: {} sessions stepping while workers are SIGKILLed",
                             options.sessionType);
  Row row;
  row.numbers = {{"sessions", double(options.sessions)},
                 {"workers", double(options.cluster.workers)},
                 {"seconds", figures.seconds},
                 {"workers_killed", double(figures.kills)},
                 {"workers_died_on_their_own", double(figures.diedOnTheirOwn)},
                 {"restarts_after_caught_crash", double(figures.restartsAfterCaughtCrash)},
                 {"steps_attempted", double(figures.attempted)},
                 {"steps_completed", double(figures.completed)},
                 {"compile_errors", double(figures.compileErrors)},
                 {"sessions_restored", double(figures.restored)},
                 {"steps_lost", double(figures.lost)},
                 {"state_mismatches", double(figures.mismatched)},
                 {"reward_mismatches", double(figures.rewardMismatches)},
                 {"steps_per_s", figures.completed / std::max(figures.seconds, 1e-9)}};
  report.rows.push_back(std::move(row));
  report.notes.push_back(fmt::format(
      "seed {}; a kill every {}-{} s, each worker replaced at once{}; heartbeats every {} s; "
      "steps are pipelined (one in flight per session), so kills land on steps in flight; "
      "a lost worker's sessions are restored until their request's deadline ({} s)",
      seed, options.cluster.minPauseSeconds, options.cluster.maxPauseSeconds,
      options.sameEndpoints ? " on the address it had" : "", options.cluster.heartbeatSeconds,
      std::chrono::duration<double>(clientOptions.requestTimeout).count()));
  report.notes.push_back(
      "every step asks for its reward, judged against what the step did: noop's Reward:Sum "
      "against the action added to the sum, llvm's Reward:IrInstructionCount against the drop "
      "of IrInstructionCount since the previous step; after a restore too");
  if (figures.lost != 0 || figures.mismatched != 0) {
    report.notes.push_back(fmt::format("LOST STEPS: first: {}", firstLoss));
  }
  if (figures.diedOnTheirOwn != 0) {
    report.notes.push_back(
        fmt::format("WORKERS DIED ON THEIR OWN ({}), besides the {} the bench killed",
                    figures.diedOnTheirOwn, figures.kills));
  }
  return report;
}

}  // namespace kiln::bench
