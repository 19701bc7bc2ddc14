#include "bench/runtime_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <latch>
#include <map>
#include <set>
#include <thread>

#include <kiln/client/client.h>
#include "bench/kiln_executable.h"
#include "programs/runs/timing.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// One RuntimeStats observation, as the bench reads it.
struct Observed {
  std::vector<double> samples;
  int cpu = -1;
  double queuedSeconds = 0;
};

Result<Observed> readStats(const Value& stats) {
  const Value* samples = findInDict(stats, "samples");
  const Value* cpu = findInDict(stats, "cpu");
  const Value* queued = findInDict(stats, "queued_s");
  if (samples == nullptr || !samples->is<DoubleTensor>() || cpu == nullptr ||
      !cpu->is<std::int64_t>() || queued == nullptr || !queued->is<double>()) {
    return internalError("RuntimeStats lacks samples, cpu or queued_s: " + stats.describe());
  }
  return Observed{samples->as<DoubleTensor>().values, static_cast<int>(cpu->as<std::int64_t>()),
                  queued->as<double>()};
}

// What one program at one level gathered over the rounds.
struct Level {
  std::vector<double> pooled;          // every sample of every session and round
  std::vector<double> sessionMedians;  // one per measurement
  std::set<int> cpus;
  double queuedSeconds = 0;
  std::vector<double> roundSeconds;  // from the start signal to the last answer
};

// A client and its session per program: a measuring thread's own.
struct Slot {
  std::unique_ptr<client::Client> client;
  std::vector<std::unique_ptr<client::Session>> sessions;  // by program
};

Result<std::vector<Slot>> openSlots(const RuntimeBenchOptions& o, const std::string& coordinator,
                                    const std::vector<std::string>& workers, unsigned count) {
  std::vector<Slot> slots(count);
  for (unsigned i = 0; i < count; ++i) {
    client::ClientOptions options;
    options.coordinator = coordinator;
    options.requestTimeout = 600s;  // a measurement may wait in line behind the others
    KILN_ASSIGN_OR_RETURN(slots[i].client, client::Client::connect(options));
    for (const std::string& program : o.programs) {
      client::SessionOptions start;
      start.sessionType = "llvm";
      start.benchmark = "benchmark://kiln-bench-v0/" + program;
      KILN_ASSIGN_OR_RETURN(auto session,
                            slots[i].client->startSessionOn(workers[i % workers.size()], start));
      KILN_RETURN_IF_ERROR(
          session->setParameter("llvm.runtime_runs", std::to_string(o.runs)).status());
      // Built now, so that no round pays for a build.
      KILN_RETURN_IF_ERROR(session->step({}, std::vector<std::string>{"IsBuildable"}).status());
      slots[i].sessions.push_back(std::move(session));
    }
  }
  return slots;
}

// `sessions` slots observe RuntimeStats of program `p` at once.
Status measureRound(std::vector<Slot>& slots, std::size_t p, unsigned sessions, Level& level) {
  std::vector<Result<Value>> answers(sessions, internalError("not measured"));
  std::latch start(static_cast<std::ptrdiff_t>(sessions) + 1);
  Steady::time_point began;
  {
    std::vector<std::jthread> threads;
    for (unsigned i = 0; i < sessions; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        auto result = slots[i].sessions[p]->step({}, std::vector<std::string>{"RuntimeStats"});
        if (!result.ok()) {
          answers[i] = result.status();
        } else {
          answers[i] = result->observations.at(0);
        }
      });
    }
    began = Steady::now();
    start.arrive_and_wait();
  }
  level.roundSeconds.push_back(std::chrono::duration<double>(Steady::now() - began).count());
  for (auto& answer : answers) {
    KILN_RETURN_IF_ERROR(answer.status());
    KILN_ASSIGN_OR_RETURN(Observed observed, readStats(*answer));
    level.pooled.insert(level.pooled.end(), observed.samples.begin(), observed.samples.end());
    level.sessionMedians.push_back(runs::median(observed.samples));
    level.cpus.insert(observed.cpu);
    level.queuedSeconds += observed.queuedSeconds;
  }
  return okStatus();
}

// The host's load averages (1, 5, 15 min): how busy the neighbours were.
std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one.empty() ? "unknown" : fmt::format("{} {} {}", one, five, fifteen);
}

std::string cpuList(const std::set<int>& cpus) {
  std::string text;
  for (int cpu : cpus) text += fmt::format("{}{}", text.empty() ? "" : ",", cpu);
  return text;
}

Row levelRow(const std::string& program, unsigned sessions, const Level& level,
             const runs::RuntimeSummary& alone) {
  const runs::RuntimeSummary s = runs::summarize(level.pooled);
  const bool floor = sessions == 1;
  const double ratio = alone.median > 0 ? s.median / alone.median : 0;
  const double bound = alone.relativeCiHalfWidth() + s.relativeCiHalfWidth();
  double worst = 1;
  for (double m : level.sessionMedians) {
    const double r = alone.median > 0 ? m / alone.median : 0;
    if (std::abs(r - 1) > std::abs(worst - 1)) worst = r;
  }
  double round = 0;
  for (double seconds : level.roundSeconds) round += seconds;
  round /= static_cast<double>(std::max<std::size_t>(level.roundSeconds.size(), 1));
  Row row;
  row.text = {{"program", program},
              {"sessions", floor ? "1 (alone)" : std::to_string(sessions)},
              {"cpus", cpuList(level.cpus)},
              {"judge", floor                          ? "the floor"
                        : std::abs(ratio - 1) <= bound ? "within noise"
                                                       : "OUTSIDE noise"}};
  row.numbers = {
      {"samples", static_cast<double>(s.count)},
      {"median_ms", s.median * 1e3},
      {"iqr_pct", s.relativeIqr() * 100},
      {"ci_pct", s.relativeCiHalfWidth() * 100},
      {"ratio_pct", ratio * 100},
      {"bound_pct", floor ? 0 : bound * 100},
      {"worst_session_pct", worst * 100},
      {"queued_ms", level.queuedSeconds * 1e3 /
                        static_cast<double>(std::max<std::size_t>(level.sessionMedians.size(), 1))},
      {"round_s", round},
  };
  return row;
}

}  // namespace

Result<Report> runRuntimeBench(const RuntimeBenchOptions& o) {
  if (o.programs.empty() || o.rounds == 0 || o.runs == 0 || o.workers == 0) {
    return invalidArgument("kiln bench runtime needs programs, rounds, runs and workers (>= 1)");
  }
  std::vector<unsigned> levels{1};
  for (unsigned n : o.sessions) {
    if (n > 1 && std::find(levels.begin(), levels.end(), n) == levels.end()) levels.push_back(n);
  }
  const unsigned most = *std::max_element(levels.begin(), levels.end());

  const std::string loadBefore = loadAverage();
  KILN_ASSIGN_OR_RETURN(auto cluster, testsupport::ChildCluster::create(kilnExecutable()));
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * coordinator,
      cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"}));
  std::vector<std::string> workers;
  const unsigned slotsPerWorker = (most + o.workers - 1) / o.workers;
  for (unsigned w = 0; w < o.workers; ++w) {
    std::vector<std::string> args =
        testsupport::benchWorkerArgs(coordinator->endpoint, slotsPerWorker, "warn");
    args.insert(args.end(), o.workerFlags.begin(), o.workerFlags.end());
    KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * worker, cluster.spawn(args));
    workers.push_back(worker->endpoint);
  }
  client::ClientOptions probeOptions;
  probeOptions.coordinator = coordinator->endpoint;
  KILN_ASSIGN_OR_RETURN(auto probe, client::Client::connect(probeOptions));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*probe, o.workers, 30s));
  KILN_ASSIGN_OR_RETURN(std::vector<Slot> slots,
                        openSlots(o, coordinator->endpoint, workers, most));

  // levels[p][l]; rounds interleave levels (reversed every other round) so
  // that the host's drift weighs on each level alike.
  std::vector<std::vector<Level>> gathered(o.programs.size(), std::vector<Level>(levels.size()));
  for (unsigned r = 0; r < o.rounds; ++r) {
    for (std::size_t p = 0; p < o.programs.size(); ++p) {
      for (std::size_t i = 0; i < levels.size(); ++i) {
        const std::size_t l = r % 2 == 0 ? i : levels.size() - 1 - i;
        KILN_RETURN_IF_ERROR(measureRound(slots, p, levels[l], gathered[p][l]));
      }
    }
  }

  Report report;
  report.title = fmt::format(
      "kiln bench runtime: RuntimeStats of kiln-bench-v0 programs, {} runs a measurement, {} "
      "rounds, alone and {} sessions at once, over {} worker process{}; judged against the same "
      "program alone in the same run",
      o.runs, o.rounds, fmt::join(std::vector<unsigned>(levels.begin() + 1, levels.end()), "/"),
      o.workers, o.workers == 1 ? "" : "es");
  for (std::size_t p = 0; p < o.programs.size(); ++p) {
    const runs::RuntimeSummary alone = runs::summarize(gathered[p][0].pooled);
    for (std::size_t l = 0; l < levels.size(); ++l) {
      report.rows.push_back(levelRow(o.programs[p], levels[l], gathered[p][l], alone));
    }
  }
  report.notes.push_back(
      "ratio_pct: the pooled median at this level / alone's (100: the same); within noise: the "
      "ratio is off 100% by at most bound_pct, the sum of the two medians' 95% confidence "
      "half-widths (distribution-free, order statistics); worst_session_pct: the session median "
      "furthest from alone's, as the same ratio");
  report.notes.push_back(
      "cpus: the measuring CPUs the runs had to themselves; queued_ms: a measurement's mean wait "
      "in line for one; round_s: from the start signal to the last answer of a round");
  for (const std::string& worker : workers) {
    auto where = probe->workerParameter(worker, "llvm.runtime_cpus", "");
    report.notes.push_back(fmt::format("worker {} measures on {}", worker,
                                       where.ok() ? *where : where.status().toString()));
  }
  report.notes.push_back(fmt::format("host load average (1, 5, 15 min) before: {}; after: {}",
                                     loadBefore, loadAverage()));
  report.notes.push_back(fmt::format(
      "this process may use CPUs {}; worker flags: {}", allowedCpus(0),
      o.workerFlags.empty() ? "none" : fmt::format("{}", fmt::join(o.workerFlags, " "))));
  return report;
}

}  // namespace kiln::bench
