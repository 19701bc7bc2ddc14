// Both paths time the same thing: a decision is the time from sending an
// answer to holding the next decision (and its default advice). The answer
// that ends the episode is timed apart on both paths as the end of the
// episode: there the compiler finishes, and kiln also measures the native
// size, work the per-decision figure must not hide behind.
#include "bench/mlgo_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "bench/kiln_executable.h"
#include "bench/path_floors.h"
#include "bench/relay_floor.h"
#include "common/process/working_directory.h"
#include "compilers/mlgo_channel/interactive_compiler.h"
#include "programs/datasets/registry.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double microsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

struct Episode {
  std::int64_t decisions = 0;      // answers given, the last one included
  std::vector<double> decisionUs;  // each decision that led to another decision, in order
  // Through kiln: the part of each of those that the worker spent in the
  // compiler (Stepped.actionMicros), so decisionUs - compilerUs is kiln's own.
  std::vector<double> compilerUs;
  double endUs = 0;  // the last answer until the episode's end was known
  double usPerDecision() const {
    double sum = 0;
    for (double us : decisionUs) sum += us;
    return decisionUs.empty() ? 0 : sum / static_cast<double>(decisionUs.size());
  }
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// The same decision takes the compiler about the same time in every episode,
// but different decisions differ by milliseconds (huffman: 0.2 to 3 ms). So
// each decision's median over the episodes of one path is compared with the
// same decision's median on the other, and the differences are averaged: the
// compiler's spread between decisions and its outliers cancel out.
double pairedAddedUs(const std::vector<Episode>& viaKiln, const std::vector<Episode>& direct,
                     std::vector<double> Episode::*kilnSide) {
  if (viaKiln.empty() || direct.empty()) return 0;
  // Every episode of one program makes the same decisions; should one not,
  // only the decisions all of them reached are compared.
  std::size_t decisions = direct.front().decisionUs.size();
  for (const Episode& e : viaKiln) decisions = std::min(decisions, (e.*kilnSide).size());
  for (const Episode& e : direct) decisions = std::min(decisions, e.decisionUs.size());
  double sum = 0;
  for (std::size_t i = 0; i < decisions; ++i) {
    std::vector<double> kilnUs, directUs;
    for (const Episode& e : viaKiln) kilnUs.push_back((e.*kilnSide)[i]);
    for (const Episode& e : direct) directUs.push_back(e.decisionUs[i]);
    sum += median(kilnUs) - median(directUs);
  }
  return decisions == 0 ? 0 : sum / static_cast<double>(decisions);
}

// What kiln itself spent on each decision: its round trip less the worker's
// time in the compiler, over every decision of every episode (all of them, or
// those that followed at least `afterCompilerUs` of compiler work: by then
// the compiler has evicted kiln's code and data from the caches). Unlike the
// comparisons with the direct loop, the compiler's own noise is not in it.
LatencySummary relay(const std::vector<Episode>& viaKiln, double afterCompilerUs = 0) {
  std::vector<std::int64_t> nanos;
  for (const Episode& e : viaKiln) {
    for (std::size_t i = 0; i < e.decisionUs.size(); ++i) {
      if (e.compilerUs[i] < afterCompilerUs) continue;
      nanos.push_back(static_cast<std::int64_t>((e.decisionUs[i] - e.compilerUs[i]) * 1e3));
    }
  }
  return summarize(nanos);
}

// A decision that followed this much compiler work finds kiln's caches cold.
constexpr double kColdAfterUs = 1000;

Result<Episode> directEpisode(const std::filesystem::path& directory,
                              const std::filesystem::path& input) {
  mlgo_channel::CompilerOptions options;
  options.sessionDirectory = directory;
  options.input = input;
  KILN_ASSIGN_OR_RETURN(mlgo_channel::InteractiveCompiler compiler,
                        mlgo_channel::InteractiveCompiler::start(options, Clock::now() + 60s));
  Episode episode;
  auto deadline = Clock::now() + 120s;
  KILN_ASSIGN_OR_RETURN(std::optional<mlgo_channel::Observation> observation,
                        compiler.next(deadline));
  while (observation) {
    auto sent = Clock::now();
    KILN_ASSIGN_OR_RETURN(std::int64_t advice, compiler.defaultAdvice(*observation));
    KILN_RETURN_IF_ERROR(compiler.advise(Value(advice), deadline));
    ++episode.decisions;
    KILN_ASSIGN_OR_RETURN(observation, compiler.next(deadline));
    if (observation) {
      KILN_RETURN_IF_ERROR(compiler.defaultAdvice(*observation).status());
      episode.decisionUs.push_back(microsSince(sent));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(mlgo_channel::CompileOutcome outcome, compiler.finish(deadline));
    episode.endUs = microsSince(sent);
    std::error_code ignored;
    std::filesystem::remove(outcome.output, ignored);
  }
  return episode;
}

Result<Episode> kilnEpisode(client::Client& client, const std::string& uri) {
  client::SessionOptions options;
  options.sessionType = "mlgo-inline";
  options.benchmark = uri;
  options.observations = {"DefaultAdvice"};
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Session> session, client.startSession(options));
  std::int64_t advice = session->initialObservations().front().as<std::int64_t>();
  std::vector<std::uint32_t> observe{0};
  KILN_ASSIGN_OR_RETURN(observe[0], session->observationIndex("DefaultAdvice"));
  Episode episode;
  auto start = Clock::now();
  for (int i = 0; i < 1'000'000 && Clock::now() - start < 120s; ++i) {
    auto sent = Clock::now();
    KILN_ASSIGN_OR_RETURN(client::StepResult stepped, session->step({Value(advice)}, observe));
    double us = microsSince(sent);
    ++episode.decisions;
    if (stepped.endOfEpisode) {
      episode.endUs = us;
      break;
    }
    episode.decisionUs.push_back(us);
    episode.compilerUs.push_back(static_cast<double>(stepped.actionTime.count()));
    advice = stepped.observations.front().as<std::int64_t>();
  }
  (void)session->end();
  return episode;
}

Result<double> batchModulesPerSecond(client::Client& client, const std::vector<std::string>& uris,
                                     unsigned jobs, unsigned inFlight) {
  const Value spec(std::string(
      R"({"steps":[{"kind":"compile","flags":["-Oz"]},{"kind":"native-size"}],"timeout_ms":60000})"));
  struct Running {
    std::unique_ptr<client::Session> session;
    std::uint64_t request = 0;
  };
  std::vector<Running> running;
  unsigned started = 0, finished = 0;
  auto start = Clock::now();
  auto launch = [&]() -> Status {
    client::SessionOptions options;
    options.sessionType = "mlgo-compile";
    options.benchmark = uris[started % uris.size()];
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Session> session, client.startSession(options));
    KILN_ASSIGN_OR_RETURN(std::uint64_t request, session->sendStep({spec}, {0}));
    running.push_back({std::move(session), request});
    ++started;
    return okStatus();
  };
  while (finished < jobs && Clock::now() - start < 600s) {
    while (started < jobs && running.size() < inFlight) KILN_RETURN_IF_ERROR(launch());
    Running job = std::move(running.front());
    running.erase(running.begin());
    KILN_ASSIGN_OR_RETURN(client::StepResult result, job.session->awaitStep(job.request));
    if (result.observations.front().as<std::int64_t>() <= 0) {
      return internalError("a -Oz job reported no native size");
    }
    (void)job.session->end();
    ++finished;
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return finished / seconds;
}

// A client and the path its requests take to the same-host worker.
struct KilnPath {
  std::string name;
  client::Client* client;
};

// What one mode's decisions run through: the worker's child process, and
// the floors measured beside it.
struct ModeSetup {
  std::string mode;
  std::string workerEndpoint;
  std::map<std::string, StreamFloor> floors;  // by floor path
};

// One program's decision figures in one mode (the cluster already runs in it).
Status measureProgram(const ModeSetup& setup, const std::string& uri,
                      datasets::DatasetRegistry& registry, const std::filesystem::path& scratch,
                      const std::vector<KilnPath>& paths, const MlgoBenchOptions& options,
                      Report& report) {
  const std::string& mode = setup.mode;
  KILN_ASSIGN_OR_RETURN(datasets::BenchmarkBytes bytes, registry.resolve(uri));
  std::filesystem::path input = scratch / "input.bc";
  std::ofstream(input, std::ios::binary) << bytes.bytes;
  std::vector<double> directUs, directEndUs;
  std::vector<std::vector<double>> kilnUs(paths.size()), kilnEndUs(paths.size());
  std::vector<Episode> directEpisodes;
  std::vector<std::vector<Episode>> kilnEpisodes(paths.size());
  std::int64_t decisions = 0;
  // Interleaved, so that the machine's drift touches every path alike.
  for (unsigned r = 0; r < std::max(1U, options.repetitions); ++r) {
    KILN_ASSIGN_OR_RETURN(Episode direct, directEpisode(scratch, input));
    decisions = direct.decisions;
    directUs.push_back(direct.usPerDecision());
    directEndUs.push_back(direct.endUs);
    directEpisodes.push_back(direct);
    for (std::size_t p = 0; p < paths.size(); ++p) {
      KILN_ASSIGN_OR_RETURN(Episode viaKiln, kilnEpisode(*paths[p].client, uri));
      if (direct.decisions < 2 || direct.decisions != viaKiln.decisions) {
        return internalError(
            fmt::format("{}: {} decisions direct, {} through kiln over {} (need >= 2, equal)", uri,
                        direct.decisions, viaKiln.decisions, paths[p].name));
      }
      kilnUs[p].push_back(viaKiln.usPerDecision());
      kilnEndUs[p].push_back(viaKiln.endUs);
      kilnEpisodes[p].push_back(std::move(viaKiln));
    }
  }
  const double directMedian = median(directUs);
  // The floor of one more hop, after as much compute as this program's
  // decisions take: about a third of a second of rounds.
  const auto compute = std::chrono::microseconds(static_cast<std::int64_t>(directMedian));
  const unsigned rounds = static_cast<unsigned>(
      std::clamp<std::int64_t>(300'000 / std::max<std::int64_t>(1, compute.count()), 50, 1000));
  KILN_ASSIGN_OR_RETURN(RelayFloor hop, measureRelayFloor(compute, rounds));
  for (std::size_t p = 0; p < paths.size(); ++p) {
    // Judged by the transport its requests took, known once they went.
    KILN_ASSIGN_OR_RETURN(std::string floorPath,
                          judgedFloorPath(*paths[p].client, setup.workerEndpoint, mode,
                                          ReplyWait::kAfterCompileWork));
    auto floor = setup.floors.find(floorPath);
    if (floor == setup.floors.end()) {
      return internalError(fmt::format("{}: no floor '{}' was measured", mode, floorPath));
    }
    const double floorUs = floor->second.latency.p50us;
    Row row;
    row.text = {{"mode", mode},
                {"program", uri},
                {"kiln_path", paths[p].name},
                {"judged_against", floorPath}};
    const double kilnMedian = median(kilnUs[p]);
    const LatencySummary relayed = relay(kilnEpisodes[p]);
    const LatencySummary coldRelayed = relay(kilnEpisodes[p], kColdAfterUs);
    row.numbers = {
        {"decisions", static_cast<double>(decisions)},
        {"direct_us_med", directMedian},
        {"kiln_us_med", kilnMedian},
        {"kiln_dec_per_s", kilnMedian > 0 ? 1e6 / kilnMedian : 0},
        {"added_us_paired", pairedAddedUs(kilnEpisodes[p], directEpisodes, &Episode::decisionUs)},
        {"compiler_us_paired",
         pairedAddedUs(kilnEpisodes[p], directEpisodes, &Episode::compilerUs)},
        {"relay_us_mean", relayed.meanUs},
        {"relay_us_p50", relayed.p50us},
        {"relay_us_p90", relayed.p90us},
        {"relay_cold_us_p50", coldRelayed.p50us},
        {"floor_us_p50", floorUs},
        {"x_floor_p50", floorUs > 0 ? relayed.p50us / floorUs : 0},
        {"hop_floor_us", hop.relayUs - hop.directUs},
        {"direct_end_us_med", median(directEndUs)},
        {"kiln_end_us_med", median(kilnEndUs[p])}};
    report.rows.push_back(std::move(row));
  }
  return okStatus();
}

// Who runs where, one row per process. In a pinned mode it also checks that
// every process is on CPU 0 alone: one that is not (started before the
// pinning, or one that reset its own affinity) would leave the pinned
// figures as-is ones.
Status addProcessRows(const std::string& mode, const testsupport::ChildProcess& coordinator,
                      const testsupport::ChildProcess& worker, Report& report) {
  struct Process {
    const char* name;
    const char* runsAs;
    int pid;  // 0: this bench's thread
  };
  const Process processes[] = {
      {"client", "this bench process (also the direct loop and the floors' clients)", 0},
      {"coordinator", "kiln coordinator, a child process", coordinator.process.pid()},
      {"worker", "kiln worker, a child process (its opt-19s are its children)",
       worker.process.pid()}};
  for (const Process& process : processes) {
    const std::string cpus = allowedCpus(process.pid);
    if (mode != "as-is" && cpus != "0") {
      return internalError(fmt::format("{}: the {} may run on CPUs '{}', not on CPU 0 alone", mode,
                                       process.name, cpus));
    }
    Row row;
    row.text = {
        {"mode", mode}, {"process", process.name}, {"runs_as", process.runsAs}, {"cpus", cpus}};
    report.rows.push_back(std::move(row));
  }
  return okStatus();
}

void addFloorRows(const ModeSetup& setup, std::size_t payloadBytes, Report& report) {
  for (const auto& [path, floor] : setup.floors) {
    Row row;
    row.text = {
        {"mode", setup.mode}, {"path", path}, {"payload", fmt::format("{} B", payloadBytes)}};
    row.numbers = {{"p50_us", floor.latency.p50us},
                   {"p90_us", floor.latency.p90us},
                   {"p99_us", floor.latency.p99us},
                   {"per_second", floor.perSecond}};
    report.rows.push_back(std::move(row));
  }
}

Status runMode(const std::string& mode, const MlgoBenchOptions& options, bool withBatch,
               datasets::DatasetRegistry& registry, const std::filesystem::path& scratch,
               Report& report) {
  // Started here, so that in a pinned mode the children (forked by a thread
  // the cluster starts from this one) and the compilers they spawn inherit
  // this thread's CPU 0, as the clients' ZeroMQ threads do.
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(kilnExecutable()));
  KILN_ASSIGN_OR_RETURN(testsupport::CoordinatorAndWorker servers,
                        testsupport::spawnCoordinatorAndWorker(cluster, options.slots));
  testsupport::ChildProcess* coordinator = servers.coordinator;
  testsupport::ChildProcess* worker = servers.worker;
  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator->endpoint;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> client,
                        client::Client::connect(clientOptions));
  clientOptions.directSameHost = false;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> zmqClient,
                        client::Client::connect(clientOptions));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*client, 1, 30s));
  KILN_RETURN_IF_ERROR(addProcessRows(mode, *coordinator, *worker, report));
  const std::vector<KilnPath> paths = {{"direct channel", client.get()},
                                       {"zeromq ipc", zmqClient.get()}};
  PathFloorOptions floorOptions;
  floorOptions.mode = mode;
  floorOptions.samples = options.floorSamples;
  KILN_ASSIGN_OR_RETURN(auto floors, measurePathFloors(cluster, floorOptions));
  const ModeSetup setup{mode, worker->endpoint, std::move(floors)};
  addFloorRows(setup, floorOptions.payloadBytes, report);
  for (const std::string& uri : options.programs) {
    KILN_RETURN_IF_ERROR(measureProgram(setup, uri, registry, scratch, paths, options, report));
  }
  if (!withBatch) return okStatus();
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> suite,
                        registry.benchmarkUris("benchmark://kiln-bench-v0"));
  KILN_ASSIGN_OR_RETURN(double modulesPerSecond,
                        batchModulesPerSecond(*client, suite, options.jobs, options.slots));
  Row batch;
  batch.text = {
      {"mode", mode},
      {"program", fmt::format("{} -Oz mlgo-compile jobs over kiln-bench-v0", options.jobs)}};
  batch.numbers = {{"modules_per_s", modulesPerSecond},
                   {"slots_in_flight", static_cast<double>(options.slots)}};
  report.rows.push_back(std::move(batch));
  return okStatus();
}

}  // namespace

Result<Report> runMlgoBench(const MlgoBenchOptions& options) {
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch, WorkingDirectory::create({}, "kiln-mlgo-bench"));
  KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry registry, datasets::DatasetRegistry::create({}));
  Report report;
  report.title =
      "kiln bench mlgo: mlgo-inline decisions from this process through real coordinator and "
      "worker processes vs the direct pipe loop";
  KILN_RETURN_IF_ERROR(runMode("as-is", options, true, registry, scratch.path(), report));
  if (options.pinned) {
    KILN_RETURN_IF_ERROR(runPinnedToCpu0(
        [&] { return runMode("pinned-cpu0", options, false, registry, scratch.path(), report); }));
  }
  report.notes.push_back(
      "processes: the client runs in this bench process (as do the direct loop, and the client "
      "ends of the floors); the coordinator and the worker are real `kiln coordinator` and "
      "`kiln worker` child processes on loopback, started anew for each mode, and the worker "
      "runs each opt-19 as its own child. The process rows give each one's allowed CPUs.");
  report.notes.push_back(fmt::format(
      "{} episodes per program, path and mode, interleaved. A decision = from sending an answer "
      "to holding the next decision and its default advice, on both paths; *_us_med: median "
      "over episodes of each episode's mean per decision. The answer that ends the episode is "
      "timed apart as *_end_us_med (kiln also measures the native size then).",
      options.repetitions));
  report.notes.push_back(
      "added_us_paired: what kiln adds, end to end: each decision's median over the episodes "
      "through kiln less the same decision's median over the direct episodes, averaged over the "
      "decisions. It carries the compiler's own drift between episodes (compiler_us_paired: the "
      "same comparison of the compiler's time alone, as the worker saw it; 0 if kiln does not "
      "slow the compiler), tens of us on a program whose decisions take milliseconds.");
  report.notes.push_back(
      "relay_us_*: what kiln adds, measured per decision: the client's round trip less the "
      "worker's time in the compiler (Stepped.actionMicros: from writing the advice to holding "
      "the next decision), so the compiler's drift is not in it. *_cold: the decisions that "
      "followed >= 1 ms of compiler work, by which time kiln's code and data are out of the "
      "caches.");
  report.notes.push_back(fmt::format(
      "floors (path rows): round trips of {} B both ways (about a decision's request and reply) "
      "between this process and an echo process, in the same run and mode, over each transport "
      "a decision can take. A same-host client's direct channel is a Unix stream socket: 'raw "
      "unix stream, client blocks, echo polls' has the decisions' own waiting (the client "
      "sleeps through the compiler's time, so each reply wakes it; the worker's loop polls for "
      "a moment after its reply, so the next answer finds it awake); 'blocking' and 'polling' "
      "have both sides sleep or both spin. The decisions' floor can exceed the blocking one: "
      "a side that spins keeps its CPU, so every reply must wake the sleeper on another CPU, "
      "where two sleepers may share one. 'raw zeromq ipc': DEALER to ROUTER echo.",
      PathFloorOptions{}.payloadBytes));
  report.notes.push_back(
      "judged_against: the floor of the transport the row's decisions took (as is, the direct "
      "channel against the decisions' own waiting; pinned to one CPU, where a spinner starves "
      "its peer, against the blocking floor; the zeromq ipc path against raw ZeroMQ ipc); "
      "floor_us_p50: that floor's p50; x_floor_p50 = relay_us_p50 / floor_us_p50.");
  report.notes.push_back(
      "hop_floor_us: a reference beside the floors, in the same mode: what one more hop costs "
      "after as much compute as this program's median decision: a stand-in compiler asked "
      "through a middle thread (in this process) that only passes bytes on, less the same asked "
      "directly.");
  report.notes.push_back(
      "kiln_path: how the client's requests reach the same-host worker: 'direct channel' (the "
      "default: a local stream socket read by the worker's own loop, worker/direct_channels.h) "
      "or 'zeromq ipc' (ClientOptions::directSameHost = false: through both sides' ZeroMQ I/O "
      "threads).");
  report.notes.push_back(
      "pinned-cpu0 pins every process to CPU 0 (this one's threads, coordinator, worker, every "
      "compiler, the echoes; checked: cpus 0 on each process row): no cross-CPU wake-ups, which "
      "cost tens of us each on a VM and land in as-is figures as often as the scheduler spreads "
      "the parties over CPUs.");
  report.notes.push_back(
      "target: kiln adds <= 50 us per decision (relay_us_mean; added_us_paired within its "
      "noise)");
  return report;
}

}  // namespace kiln::bench
