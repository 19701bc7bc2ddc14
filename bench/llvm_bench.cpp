#include "bench/llvm_bench.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <kiln/client/client.h>
#include "bench/kiln_executable.h"
#include "bench/path_floors.h"
#include "common/process/subprocess.h"
#include "common/process/working_directory.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// Collects samples of `op` until `count` are taken or the time bound passes;
// `prepare` runs before each, untimed.
template <class Prepare, class Op>
Result<LatencySummary> sample(unsigned count, double seconds, Prepare&& prepare, Op&& op) {
  std::vector<std::int64_t> samples;
  const auto limit = Clock::now() + std::chrono::duration<double>(seconds);
  while (samples.size() < count && (samples.empty() || Clock::now() < limit)) {
    KILN_RETURN_IF_ERROR(prepare());
    auto start = Clock::now();
    KILN_RETURN_IF_ERROR(op());
    samples.push_back(nanosSince(start));
  }
  return summarize(samples);
}

template <class Op>
Result<LatencySummary> sample(unsigned count, double seconds, Op&& op) {
  return sample(
      count, seconds, [] { return okStatus(); }, std::forward<Op>(op));
}

constexpr int kWarmUpSteps = 2000;

Result<std::int64_t> passIndex(const client::Session& session, const std::string& name) {
  const auto& names = session.spaces().actionSpaces.at(0).names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].find("(" + name + ")") != std::string::npos ||
        names[i].find("(" + name + "<") != std::string::npos || names[i] == name) {
      return static_cast<std::int64_t>(i);
    }
  }
  return notFound(fmt::format("no pass '{}' in the llvm action space", name));
}

client::SessionOptions llvmSession(const std::string& uri) {
  client::SessionOptions options;
  options.sessionType = "llvm";
  options.benchmark = uri;
  return options;
}

struct Context {
  client::Client& client;
  std::string worker;
  std::filesystem::path scratch;
  const LlvmBenchOptions& o;
  std::string mode;
  Report& report;
  std::int64_t smallInstructions = 0;
  std::int64_t largeInstructions = 0;
};

// The opt-19 reference of one step: the subprocess, and opt's own time in
// the pass (its -time-passes rows, without the verifier and the writer).
struct OptReference {
  double p50us = 0;
  double inPassUs = 0;
};

// What a row is judged against: opt-19 doing the same work on the same input
// (then `x_cheaper`), or a floor, or nothing ("-").
constexpr const char* kJudgedAgainstOpt = "opt-19 -passes=<same pipeline> on the same input";
constexpr const char* kNoOptComparison = "- (no pass runs: not compared with opt-19)";
constexpr const char* kNoChangeNoOptComparison =
    "- (the module does not change: not compared with opt-19)";

void addRow(Context& c, const std::string& benchmark, const std::string& operation,
            const LatencySummary& s, const std::string& judgedAgainst = "-",
            const OptReference* opt = nullptr) {
  Row row;
  row.text = {{"mode", c.mode},
              {"benchmark", benchmark},
              {"operation", operation},
              {"judged_against", judgedAgainst}};
  row.numbers = {{"p50_us", s.p50us}, {"p99_us", s.p99us}, {"samples", double(s.samples)}};
  if (opt != nullptr) {
    row.numbers.push_back({"opt19_p50_us", opt->p50us});
    row.numbers.push_back({"opt_pass_us", opt->inPassUs});
    row.numbers.push_back({"x_cheaper", opt->p50us / std::max(s.p50us, 1e-3)});
    // The best any fresh run of the pass could do against the subprocess.
    if (opt->inPassUs > 0) row.numbers.push_back({"x_bound", opt->p50us / opt->inPassUs});
  }
  c.report.rows.push_back(std::move(row));
}

// One `opt-19 -passes=<pipeline> in.bc -o out.bc` per sample: what a step
// costs when every action is a compiler process.
Result<LatencySummary> measureOpt(Context& c, const std::filesystem::path& input,
                                  const std::string& pipeline) {
  const std::filesystem::path output = c.scratch / "opt-out.bc";
  return sample(c.o.optRuns, c.o.secondsPerMeasurement, [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(
        Subprocess child,
        Subprocess::spawn({c.o.opt, "-passes=" + pipeline, input.string(), "-o", output.string()}));
    KILN_ASSIGN_OR_RETURN(ExitStatus exit, child.waitFor(std::chrono::seconds(60)));
    if (!exit.success()) return internalError(fmt::format("{} {}", c.o.opt, exit.describe()));
    return okStatus();
  });
}

// Sums the wall times (seconds) of the pass execution report's rows except
// the verifier, the bitcode writer and the total; microseconds.
double inPassMicros(const std::string& timePassesReport) {
  std::istringstream in(timePassesReport);
  std::string line;
  bool inPassReport = false;
  double seconds = 0;
  while (std::getline(in, line)) {
    if (line.find("Pass execution timing report") != std::string::npos) {
      inPassReport = true;
      continue;
    }
    if (!inPassReport) continue;
    if (line.find("execution timing report") != std::string::npos) break;  // analyses follow
    // "   0.0034 ( 75.4%)   ...   0.0190 ( 94.5%)  GVNPass": wall time is
    // the last number before the name.
    const auto name = line.find_last_of(')');
    if (name == std::string::npos) continue;
    const std::string passName = line.substr(name + 1);
    if (passName.find("Total") != std::string::npos ||
        passName.find("VerifierPass") != std::string::npos ||
        passName.find("BitcodeWriterPass") != std::string::npos) {
      continue;
    }
    const auto open = line.find_last_of('(');
    if (open == std::string::npos) continue;
    const auto start = line.find_last_not_of(' ', open - 1);
    const auto begin = line.find_last_of(' ', start);
    if (start == std::string::npos || begin == std::string::npos) continue;
    seconds += std::atof(line.substr(begin + 1, start - begin).c_str());
  }
  return seconds * 1e6;
}

// opt-19's own time in the pass: the median of a few -time-passes runs.
Result<double> measureOptInPass(Context& c, const std::filesystem::path& input,
                                const std::string& pipeline) {
  std::vector<double> runs;
  for (unsigned i = 0; i < std::max(1u, c.o.optRuns / 3); ++i) {
    KILN_ASSIGN_OR_RETURN(ProcessOutput out,
                          runSubprocess({c.o.opt, "-passes=" + pipeline, "-time-passes",
                                         input.string(), "-o", (c.scratch / "opt-t.bc").string()},
                                        std::chrono::seconds(60)));
    if (!out.status.success()) {
      return internalError(fmt::format("{} -time-passes {}", c.o.opt, out.status.describe()));
    }
    runs.push_back(inPassMicros(out.stderrText));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

Result<OptReference> measureOptReference(Context& c, const std::filesystem::path& input,
                                         const std::string& pipeline) {
  KILN_ASSIGN_OR_RETURN(LatencySummary opt, measureOpt(c, input, pipeline));
  KILN_ASSIGN_OR_RETURN(double inPass, measureOptInPass(c, input, pipeline));
  return OptReference{opt.p50us, inPass};
}

constexpr std::string_view kModuleCache = "service.parsed_module_cache.";
constexpr std::string_view kTransitionCache = "service.transition_cache.";
constexpr std::string_view kReadyModules = "service.ready_modules.";

// A worker parameter of the cache under `prefix` (one of the above).
Result<std::string> cacheParameter(Context& c, std::string_view prefix, std::string_view name,
                                   const std::string& value = {}) {
  return c.client.workerParameter(c.worker, std::string(prefix) + std::string(name), value);
}

Status setModuleCacheBytes(Context& c, const std::string& bytes) {
  return cacheParameter(c, kModuleCache, "set_max_size_in_bytes", bytes).status();
}

// 0 disables the transition cache (every step runs its pass: "fresh").
Status setTransitionCacheSize(Context& c, std::uint64_t entries) {
  return cacheParameter(c, kTransitionCache, "set_max_size", std::to_string(entries)).status();
}

struct CacheCounts {
  std::uint64_t hits = 0, misses = 0, evictions = 0, inserts = 0;
};

// A worker cache's counters (`prefix`: one of the above).
Result<CacheCounts> cacheCounts(Context& c, std::string_view prefix) {
  KILN_ASSIGN_OR_RETURN(std::string reply, c.client.workerParameter(
                                               c.worker, std::string(prefix) + "get_counters", ""));
  CacheCounts counters;
  if (std::sscanf(reply.c_str(),
                  "hits=%" SCNu64 " misses=%" SCNu64 " evictions=%" SCNu64 " inserts=%" SCNu64,
                  &counters.hits, &counters.misses, &counters.evictions, &counters.inserts) != 4) {
    return internalError(fmt::format("unexpected {}get_counters reply: {}", prefix, reply));
  }
  return counters;
}

// Fails unless the samples measured as served by the cache under `prefix`
// all were.
Status expectHits(Context& c, std::string_view prefix, const CacheCounts& before,
                  std::uint64_t samples, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(CacheCounts after, cacheCounts(c, prefix));
  if (after.hits - before.hits < samples) {
    return internalError(fmt::format("{}: {} of {} samples were {}get_counters hits", what,
                                     after.hits - before.hits, samples, prefix));
  }
  return okStatus();
}

// Waits until the worker's reader has read what it wants (ready_modules.h),
// at most 2 s: the reader runs only on an otherwise idle CPU.
Status waitForReadAhead(Context& c) {
  const auto limit = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < limit) {
    KILN_ASSIGN_OR_RETURN(std::string idle, cacheParameter(c, kReadyModules, "get_idle"));
    if (idle == "true") return okStatus();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return okStatus();  // the start is timed anyway; expectHits counts it
}

constexpr std::uint64_t kTransitionCacheEntries = 8192;  // the worker's default

// One pass on one benchmark. The headline is the pass's first application in
// a new episode (what an RL step is), against opt-19 running the same
// pipeline on the same input: with the worker's caches as they are by
// default (the transition cache on, this transition never seen: a miss) and
// with the transition cache off. When that first application leaves the
// module as it was, the row says so and has no opt comparison: a step that
// changes nothing is no like-for-like measure of compile work. Repeats on the
// unchanged module and transition-cache hits are rows of their own and are
// never compared with opt.
Status measurePass(Context& c, const std::string& label, const std::string& uri,
                   const std::string& pass, const std::filesystem::path& input) {
  const std::vector<std::uint32_t> none;
  std::int64_t action = 0;
  std::string pipeline;
  bool changes = false;
  {
    KILN_RETURN_IF_ERROR(setTransitionCacheSize(c, 0));
    KILN_ASSIGN_OR_RETURN(auto probe, c.client.startSession(llvmSession(uri)));
    KILN_ASSIGN_OR_RETURN(action, passIndex(*probe, pass));
    // The action's exact pipeline (the space's metadata), which opt runs alike.
    const Value* pipelines = findInDict(probe->spaces().actionSpaces[0].metadata, "pipelines");
    if (pipelines == nullptr || !pipelines->is<ValueList>() ||
        pipelines->as<ValueList>().size() <= static_cast<std::size_t>(action)) {
      return internalError("the llvm action space gives no pipeline for " + pass);
    }
    pipeline = pipelines->as<ValueList>()[static_cast<std::size_t>(action)].as<std::string>();
    KILN_ASSIGN_OR_RETURN(client::StepResult first, probe->step({Value(action)}, none));
    changes = !first.actionHadNoEffect;
    KILN_RETURN_IF_ERROR(probe->end());
  }
  const std::vector<Value> actions{Value(action)};
  KILN_ASSIGN_OR_RETURN(OptReference opt, measureOptReference(c, input, pipeline));
  const std::string firstName = "first " + pass + (changes ? "" : " (no change)");

  // Repeating the pass after its first applications (no effect).
  auto repeat = [&](bool cached) -> Status {
    KILN_RETURN_IF_ERROR(setTransitionCacheSize(c, cached ? kTransitionCacheEntries : 0));
    KILN_ASSIGN_OR_RETURN(auto session, c.client.startSession(llvmSession(uri)));
    // The first applications do the work (some passes change the module
    // again on a second run), the first one with no effect records "no
    // change": from then on every step repeats a transition seen before.
    for (int i = 0; i < 8; ++i) {
      KILN_ASSIGN_OR_RETURN(client::StepResult warmup, session->step(actions, none));
      if (warmup.actionHadNoEffect) break;
    }
    KILN_ASSIGN_OR_RETURN(CacheCounts before, cacheCounts(c, kTransitionCache));
    KILN_ASSIGN_OR_RETURN(LatencySummary step,
                          sample(c.o.iterations, c.o.secondsPerMeasurement,
                                 [&] { return session->step(actions, none).status(); }));
    if (cached) {
      KILN_RETURN_IF_ERROR(
          expectHits(c, kTransitionCache, before, step.samples, label + " " + pass));
    }
    addRow(c, label, "repeat " + pass + (cached ? ", transition-cache hit" : ", unchanged module"),
           step, cached ? kNoOptComparison : kNoChangeNoOptComparison);
    return session->end();
  };
  // The first step of a new episode from the benchmark.
  // kMiss: the cache on (the worker's default) but emptied before each
  // sample (untimed), so the step pays the identity hash, the lookup and the
  // recording, as a transition nobody took before does.
  enum Mode { kMiss, kCacheOff, kHit };
  auto first = [&](Mode mode) -> Status {
    KILN_RETURN_IF_ERROR(
        setTransitionCacheSize(c, mode == kCacheOff ? 0 : kTransitionCacheEntries));
    if (mode == kHit) {  // an earlier episode took this step
      KILN_ASSIGN_OR_RETURN(auto session, c.client.startSession(llvmSession(uri)));
      KILN_RETURN_IF_ERROR(session->step(actions, none).status());
      KILN_RETURN_IF_ERROR(session->end());
    }
    KILN_ASSIGN_OR_RETURN(CacheCounts before, cacheCounts(c, kTransitionCache));
    std::vector<std::int64_t> samples;
    const auto limit = Clock::now() + std::chrono::duration<double>(c.o.secondsPerMeasurement);
    while (samples.size() < c.o.startIterations && (samples.empty() || Clock::now() < limit)) {
      KILN_ASSIGN_OR_RETURN(auto session, c.client.startSession(llvmSession(uri)));
      if (mode == kMiss) {
        KILN_RETURN_IF_ERROR(
            cacheParameter(c, kTransitionCache, "evict_to_capacity", "0").status());
      }
      const auto start = Clock::now();
      KILN_ASSIGN_OR_RETURN(client::StepResult step, session->step(actions, none));
      samples.push_back(nanosSince(start));
      if (step.actionHadNoEffect == changes) {
        return internalError(
            fmt::format("{} on {}: the first application {} the module in one "
                        "episode and not in another",
                        pass, uri, changes ? "changed" : "left"));
      }
      KILN_RETURN_IF_ERROR(session->end());
    }
    const LatencySummary step = summarize(samples);
    if (mode == kHit) {
      KILN_RETURN_IF_ERROR(
          expectHits(c, kTransitionCache, before, step.samples, label + " " + pass));
      addRow(c, label, firstName + ", transition-cache hit", step, kNoOptComparison);
    } else if (changes) {
      addRow(c, label, firstName + (mode == kMiss ? "" : ", cache off"), step, kJudgedAgainstOpt,
             &opt);
    } else {
      addRow(c, label, firstName + (mode == kMiss ? "" : ", cache off"), step,
             kNoChangeNoOptComparison);
    }
    return okStatus();
  };
  KILN_RETURN_IF_ERROR(first(kMiss));
  KILN_RETURN_IF_ERROR(first(kCacheOff));
  KILN_RETURN_IF_ERROR(first(kHit));
  KILN_RETURN_IF_ERROR(repeat(false));
  KILN_RETURN_IF_ERROR(repeat(true));
  return okStatus();
}

Status measureBenchmark(Context& c, const std::string& label, const std::string& uri) {
  // StartSession without the parsed-module cache (its bound at 0: every
  // start parses and verifies; the bytes stay in the benchmark cache, so a
  // generator does not run again), then with it.
  KILN_RETURN_IF_ERROR(setModuleCacheBytes(c, "0"));
  // Each sample times the start alone: the session ends and the worker's
  // reader finishes its work (untimed) before the next, in every row, so
  // that they differ only in what the start does.
  std::unique_ptr<client::Session> started;
  auto endAndSettle = [&]() -> Status {
    if (started != nullptr) KILN_RETURN_IF_ERROR(started->end());
    started.reset();
    return waitForReadAhead(c);
  };
  auto start = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(started, c.client.startSession(llvmSession(uri)));
    return okStatus();
  };
  KILN_ASSIGN_OR_RETURN(
      LatencySummary uncached,
      sample(c.o.startIterations, c.o.secondsPerMeasurement, endAndSettle, start));
  KILN_RETURN_IF_ERROR(endAndSettle());
  KILN_RETURN_IF_ERROR(setModuleCacheBytes(c, std::to_string(std::uint64_t{128} << 20)));
  auto warmOptions = llvmSession(uri);
  warmOptions.observations = {"IrInstructionCount"};
  KILN_ASSIGN_OR_RETURN(auto warm, c.client.startSession(warmOptions));
  (label == "small" ? c.smallInstructions : c.largeInstructions) =
      warm->initialObservations().at(0).as<std::int64_t>();
  // Cached, read-ahead off: the verified bytes from the parsed-module cache,
  // read into a fresh context by the start (what a worker with no idle time
  // pays).
  KILN_ASSIGN_OR_RETURN(std::string readAheadBound,
                        cacheParameter(c, kReadyModules, "get_max_size"));
  KILN_RETURN_IF_ERROR(cacheParameter(c, kReadyModules, "set_max_size", "0").status());
  KILN_ASSIGN_OR_RETURN(
      LatencySummary cached,
      sample(c.o.startIterations, c.o.secondsPerMeasurement, endAndSettle, start));
  KILN_RETURN_IF_ERROR(cacheParameter(c, kReadyModules, "set_max_size", readAheadBound).status());
  // Read-ahead on (the default): the worker's reader read the module while
  // the worker was idle, as it does during a learner's lull.
  KILN_ASSIGN_OR_RETURN(CacheCounts before, cacheCounts(c, kReadyModules));
  KILN_ASSIGN_OR_RETURN(
      LatencySummary readAhead,
      sample(c.o.startIterations, c.o.secondsPerMeasurement, endAndSettle, start));
  KILN_RETURN_IF_ERROR(endAndSettle());
  // The reader runs only on an idle CPU: on a loaded machine it may not
  // have finished before a start. The row stays, and says how many of its
  // starts the read-ahead served.
  KILN_ASSIGN_OR_RETURN(CacheCounts after, cacheCounts(c, kReadyModules));
  if (after.hits - before.hits < readAhead.samples) {
    c.report.notes.push_back(fmt::format(
        "{} start cached, read ahead ({}): the reader served {} of {} starts (it runs only on an "
        "idle CPU; the machine was busy)",
        label, c.mode, after.hits - before.hits, readAhead.samples));
  }
  addRow(c, label, "start uncached", uncached);
  addRow(c, label, "start cached", cached);
  addRow(c, label, "start cached, read ahead", readAhead);

  // The input of every step below, for opt-19.
  auto bitcode = warm->step({}, std::vector<std::string>{"Bitcode"});
  if (!bitcode.ok()) return bitcode.status();
  const std::filesystem::path input = c.scratch / "input.bc";
  {
    std::ofstream out(input, std::ios::binary);
    const std::string& bytes = bitcode->observations.at(0).as<Bytes>().data;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  KILN_ASSIGN_OR_RETURN(LatencySummary fork,
                        sample(c.o.iterations, c.o.secondsPerMeasurement, [&]() -> Status {
                          KILN_ASSIGN_OR_RETURN(auto f, warm->fork());
                          return f->end();
                        }));
  addRow(c, label, "fork", fork);

  for (const std::string& pass : c.o.passes) {
    KILN_RETURN_IF_ERROR(measurePass(c, label, uri, pass, input));
  }
  KILN_RETURN_IF_ERROR(setTransitionCacheSize(c, kTransitionCacheEntries));
  return warm->end();
}

// A csmith program of at least `largeMinInstructions` instructions (seeds
// tried in order, at most 20).
Result<std::string> pickLargeBenchmark(Context& c) {
  for (unsigned seed = c.o.csmithSeed; seed < c.o.csmithSeed + 20; ++seed) {
    const std::string uri = fmt::format("generator://csmith-v0/{}", seed);
    auto options = llvmSession(uri);
    options.observations = {"IrInstructionCount"};
    auto session = c.client.startSession(options);
    if (!session.ok()) continue;  // seeds that do not build are skipped
    const std::int64_t count = (*session)->initialObservations().at(0).as<std::int64_t>();
    KILN_RETURN_IF_ERROR((*session)->end());
    if (count >= c.o.largeMinInstructions) return uri;
  }
  return notFound(fmt::format("no csmith seed from {} gave {} instructions", c.o.csmithSeed,
                              c.o.largeMinInstructions));
}

Status measureMemory(Context& c, int workerPid) {
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(c.client, 0, std::chrono::seconds(60)));
  const std::uint64_t idle = residentBytes(workerPid);
  std::vector<std::unique_ptr<client::Session>> sessions;
  std::vector<Value> actions;
  {
    KILN_ASSIGN_OR_RETURN(auto probe, c.client.startSession(llvmSession(c.o.smallBenchmark)));
    KILN_ASSIGN_OR_RETURN(std::int64_t sroa, passIndex(*probe, "sroa"));
    actions = {Value(sroa)};
    sessions.push_back(std::move(probe));
  }
  // Each session takes one changing step so that it holds its own module
  // (and target machine), not just the cached one.
  while (sessions.size() < c.o.liveSessions) {
    KILN_ASSIGN_OR_RETURN(auto s, c.client.startSession(llvmSession(c.o.smallBenchmark)));
    KILN_RETURN_IF_ERROR(s->step(actions, std::vector<std::uint32_t>{}).status());
    sessions.push_back(std::move(s));
  }
  KILN_RETURN_IF_ERROR(
      testsupport::waitForLiveSessions(c.client, c.o.liveSessions, std::chrono::seconds(60)));
  const std::uint64_t full = residentBytes(workerPid);
  for (auto& s : sessions) KILN_RETURN_IF_ERROR(s->end());
  sessions.clear();
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(c.client, 0, std::chrono::seconds(60)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::uint64_t after = residentBytes(workerPid);
  Row row;
  row.text = {{"mode", c.mode}, {"process", "worker"}, {"benchmark", "small"}};
  row.numbers = {{"idle_mib", idle / 1048576.0},
                 {"sessions", double(c.o.liveSessions)},
                 {"with_mib", full / 1048576.0},
                 {"per_sess_kib", (double(full) - double(idle)) / c.o.liveSessions / 1024.0},
                 {"after_mib", after / 1048576.0},
                 {"after_vs_idle", double(after) / double(std::max<std::uint64_t>(idle, 1))}};
  c.report.rows.push_back(std::move(row));
  return okStatus();
}

Status runMode(const std::string& mode, const LlvmBenchOptions& o, bool withMemory,
               Report& report) {
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(kilnExecutable()));
  // The worker lets this client size its caches, and hold the live
  // sessions of the memory figure (more than --max-sessions-per-client's
  // default).
  KILN_ASSIGN_OR_RETURN(
      testsupport::CoordinatorAndWorker servers,
      testsupport::spawnCoordinatorAndWorker(cluster, o.slots,
                                             {"--allow-client-tuning", "--max-sessions-per-client",
                                              std::to_string(std::max(1u, o.liveSessions))}));
  testsupport::ChildProcess* coordinator = servers.coordinator;
  testsupport::ChildProcess* worker = servers.worker;
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint;
  options.forceTcp = o.forceTcp;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(testsupport::waitForLiveSessions(*client, 0, std::chrono::seconds(60)));
  KILN_ASSIGN_OR_RETURN(auto workers, client->listCluster());
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch, WorkingDirectory::create({}, "kiln-bench-llvm"));
  Context c{*client, workers.at(0).endpoint, scratch.path(), o, mode, report};
  // The transport under every row: the raw floors of the paths a same-host
  // request may take, between two processes, in this run and mode; and a
  // noop step's round trip on the same cluster, judged against the floor of
  // the path it took.
  PathFloorOptions floorOptions;
  floorOptions.mode = mode;
  floorOptions.samples = o.iterations;
  floorOptions.seconds = o.secondsPerMeasurement;
  KILN_ASSIGN_OR_RETURN(auto floors, measurePathFloors(cluster, floorOptions));
  for (const auto& [path, floor] : floors) {
    addRow(c, fmt::format("raw, {} B", floorOptions.payloadBytes), path, floor.latency);
  }
  {
    KILN_ASSIGN_OR_RETURN(
        auto noop, c.client.startSession(client::SessionOptions{"noop", "benchmark://floor"}));
    const std::vector<Value> noEffect{Value(std::int64_t{8})};
    // Steady state, as an agent's thousands of steps see it: the first steps
    // of a session also pay for the scheduler placing client and worker
    // (the same CPU at first, after a wake-up) and the spinning adapting.
    for (int i = 0; i < kWarmUpSteps; ++i) {
      KILN_RETURN_IF_ERROR(noop->step(noEffect, std::vector<std::uint32_t>{}).status());
    }
    KILN_ASSIGN_OR_RETURN(LatencySummary step, sample(o.iterations, o.secondsPerMeasurement, [&] {
                            return noop->step(noEffect, std::vector<std::uint32_t>{}).status();
                          }));
    // Over TCP (--force-tcp) no floor of this bench matches: `kiln bench rtt`
    // has the TCP floors.
    auto floorPath = judgedFloorPath(c.client, noop->endpoint(), mode, ReplyWait::kQuick);
    const auto floor = floorPath.ok() ? floors.find(*floorPath) : floors.end();
    addRow(c, "noop", "step", step,
           floor != floors.end() ? floor->first : "- (see kiln bench rtt)");
    const double floorP50 = floor != floors.end() ? floor->second.latency.p50us : 0;
    c.report.rows.back().numbers.push_back(
        {"x_floor_p50", floorP50 > 0 ? step.p50us / floorP50 : 0});
    report.notes.push_back(
        fmt::format("{}: steps went over {}", mode, c.client.connectedAddress(noop->endpoint())));
    KILN_RETURN_IF_ERROR(noop->end());
  }
  KILN_RETURN_IF_ERROR(measureBenchmark(c, "small", o.smallBenchmark));
  KILN_ASSIGN_OR_RETURN(std::string large, pickLargeBenchmark(c));
  KILN_RETURN_IF_ERROR(measureBenchmark(c, "large", large));
  if (withMemory) {
    report.notes.push_back(fmt::format("small = {} ({} instructions), large = {} ({} instructions)",
                                       o.smallBenchmark, c.smallInstructions, large,
                                       c.largeInstructions));
  }
  if (withMemory) KILN_RETURN_IF_ERROR(measureMemory(c, worker->process.pid()));
  return okStatus();
}

}  // namespace

Result<Report> runLlvmBench(const LlvmBenchOptions& o) {
  Report report;
  report.title =
      "kiln bench llvm: llvm sessions through real coordinator and worker processes on loopback";
  KILN_RETURN_IF_ERROR(runMode("as-is", o, true, report));
  if (o.pinned) {
    KILN_RETURN_IF_ERROR(runPinnedToCpu0([&] { return runMode("pinned-cpu0", o, false, report); }));
  }
  report.notes.push_back(
      "latency: one client request's round trip (client -> worker -> client). Floors: a raw "
      "Unix stream socket (the same-host direct channel the steps take) and raw ZeroMQ ipc, "
      "160 B both ways between two processes, both sides blocking, both polling, and client "
      "blocking with the echo polling, measured in the same run and mode (pinned: blocking "
      "only, a spinner starves its peer); the noop 'step' row (after "
      "2,000 unmeasured steps) is judged against the floor of "
      "the path it took (as is: polling, since client and worker each poll for a moment for "
      "a quick reply) with x_floor_p50.");
  report.notes.push_back(
      "'first P' is the headline of pass P: its first application in a new episode from the "
      "benchmark, with the worker's default caches (the transition cache on, the transition "
      "never seen: it pays the identity hash, the lookup and the recording), judged against "
      "one `opt-19 -passes=<same pipeline>` process on the benchmark's bitcode (the same "
      "input); 'first P, cache off' the same with the transition cache off. Only these rows "
      "have x_cheaper = opt19_p50_us / p50_us, and only when the pass changes the module "
      "(else the row says '(no change)'). Not compared with opt: 'first P, transition-cache "
      "hit' (another episode took the same step: the cache replays it, every sample checked "
      "to be a hit), 'repeat P, unchanged module' (P again after it stopped changing the "
      "module: no effect, the pass runs and the module's fingerprint shows nothing changed) "
      "and 'repeat P, transition-cache hit'.");
  report.notes.push_back(
      "opt_pass_us: opt's own wall time in the pass (-time-passes rows without verifier and "
      "writer, median of a few runs); x_bound = opt19_p50_us / opt_pass_us, the most any "
      "fresh application could reach (-time-passes reports 0.1 ms steps: opt_pass_us 0 means "
      "under 0.1 ms, no x_bound).");
  report.notes.push_back(
      "start uncached: parsed-module cache bound at 0 (parse + verify every time; the bytes "
      "come from the benchmark cache); start cached: the verified bytes from that cache, read "
      "into a fresh context by the start (read-ahead off: what a worker with no idle time "
      "pays); start cached, read ahead: the worker's reader (a SCHED_IDLE thread) read the "
      "module while the worker was idle and the start takes it (every sample checked to be a "
      "service.ready_modules hit); either way the first step pays for its step alone. fork "
      "copies the parent's bytes and reads them on the fork's first use.");
  report.notes.push_back(
      "targets: noop step <= 1.5x its floor; first application of a cheap pass on the small "
      "program p50 <= 250 us pinned; fork (small) <= 500 us; start cached <= 1 ms; every "
      "first application >= 20x cheaper than opt-19 where x_bound allows it; worker <= 1 GiB "
      "with the live sessions and after_vs_idle <= 1.10.");
  return report;
}

}  // namespace kiln::bench
