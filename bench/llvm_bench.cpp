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

#include "bench/child_cluster.h"
#include "bench/zmq_floor.h"
#include "client/client.h"
#include "common/subprocess.h"
#include "common/working_directory.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// Collects samples of `op` until `count` are taken or the time bound passes.
template <class Op>
Result<LatencySummary> sample(unsigned count, double seconds, Op&& op) {
  std::vector<std::int64_t> samples;
  const auto limit = Clock::now() + std::chrono::duration<double>(seconds);
  while (samples.size() < count && (samples.empty() || Clock::now() < limit)) {
    auto start = Clock::now();
    KILN_RETURN_IF_ERROR(op());
    samples.push_back(nanosSince(start));
  }
  return summarize(samples);
}

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

void addRow(Context& c, const std::string& benchmark, const std::string& operation,
            const LatencySummary& s, const OptReference& opt = {}) {
  Row row;
  row.text = {{"mode", c.mode}, {"benchmark", benchmark}, {"operation", operation}};
  row.numbers = {{"p50_us", s.p50us}, {"p99_us", s.p99us}, {"samples", double(s.samples)}};
  if (opt.p50us > 0) {
    row.numbers.push_back({"opt19_p50_us", opt.p50us});
    row.numbers.push_back({"opt_pass_us", opt.inPassUs});
    row.numbers.push_back({"x_cheaper", opt.p50us / std::max(s.p50us, 1e-3)});
    // The best any fresh run of the pass could do against the subprocess.
    if (opt.inPassUs > 0) row.numbers.push_back({"x_bound", opt.p50us / opt.inPassUs});
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

Status setModuleCacheBytes(Context& c, const std::string& bytes) {
  return c.client
      .workerParameter(c.worker, "service.parsed_module_cache.set_max_size_in_bytes", bytes)
      .status();
}

// 0 disables the transition cache (every step runs its pass: "fresh").
Status setTransitionCacheSize(Context& c, std::uint64_t entries) {
  return c.client
      .workerParameter(c.worker, "service.transition_cache.set_max_size", std::to_string(entries))
      .status();
}

struct TransitionCounters {
  std::uint64_t hits = 0, misses = 0, evictions = 0, inserts = 0;
};

Result<TransitionCounters> transitionCounters(Context& c) {
  KILN_ASSIGN_OR_RETURN(
      std::string reply,
      c.client.workerParameter(c.worker, "service.transition_cache.get_counters", ""));
  TransitionCounters counters;
  if (std::sscanf(reply.c_str(),
                  "hits=%" SCNu64 " misses=%" SCNu64 " evictions=%" SCNu64 " inserts=%" SCNu64,
                  &counters.hits, &counters.misses, &counters.evictions, &counters.inserts) != 4) {
    return internalError("unexpected transition cache counters: " + reply);
  }
  return counters;
}

// Fails unless the steps measured as cached were all served by the cache.
Status expectHits(Context& c, const TransitionCounters& before, std::uint64_t steps,
                  const std::string& what) {
  KILN_ASSIGN_OR_RETURN(TransitionCounters after, transitionCounters(c));
  if (after.hits - before.hits < steps) {
    return internalError(fmt::format("{}: {} of {} cached steps were transition cache hits", what,
                                     after.hits - before.hits, steps));
  }
  return okStatus();
}

constexpr std::uint64_t kTransitionCacheEntries = 8192;  // the worker's default

// One pass on one benchmark: the steady state of repeating it in a session
// and the first step of a new episode, each fresh (transition cache off)
// and cached (the transition seen before), against opt-19 on the same input.
Status measurePass(Context& c, const std::string& label, const std::string& uri,
                   const std::string& pass, const std::filesystem::path& input) {
  const std::vector<std::uint32_t> none;
  std::int64_t action = 0;
  std::string pipeline;
  {
    KILN_ASSIGN_OR_RETURN(auto probe, c.client.startSession(llvmSession(uri)));
    KILN_ASSIGN_OR_RETURN(action, passIndex(*probe, pass));
    pipeline = probe->spaces().actionSpaces[0].names[action];
    KILN_RETURN_IF_ERROR(probe->end());
  }
  const std::vector<Value> actions{Value(action)};
  KILN_ASSIGN_OR_RETURN(OptReference opt, measureOptReference(c, input, pipeline));

  // Repeating the pass after a first application (mostly no effect).
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
    KILN_ASSIGN_OR_RETURN(TransitionCounters before, transitionCounters(c));
    KILN_ASSIGN_OR_RETURN(LatencySummary step,
                          sample(c.o.iterations, c.o.secondsPerMeasurement,
                                 [&] { return session->step(actions, none).status(); }));
    if (cached) {
      KILN_RETURN_IF_ERROR(expectHits(c, before, step.samples, label + " " + pass));
    }
    addRow(c, label, "step " + pass + (cached ? " cached" : " fresh"), step, opt);
    return session->end();
  };
  // The first step of a new episode from the benchmark (a changing step).
  // kMiss: the cache on but emptied before each sample (untimed), so the
  // step pays the identity hash, the lookup and the recording.
  enum Mode { kFresh, kMiss, kCached };
  auto first = [&](Mode mode) -> Status {
    const bool cached = mode == kCached;
    KILN_RETURN_IF_ERROR(setTransitionCacheSize(c, mode == kFresh ? 0 : kTransitionCacheEntries));
    if (cached) {  // an earlier episode took this step
      KILN_ASSIGN_OR_RETURN(auto session, c.client.startSession(llvmSession(uri)));
      KILN_RETURN_IF_ERROR(session->step(actions, none).status());
      KILN_RETURN_IF_ERROR(session->end());
    }
    KILN_ASSIGN_OR_RETURN(TransitionCounters before, transitionCounters(c));
    std::vector<std::int64_t> samples;
    const auto limit = Clock::now() + std::chrono::duration<double>(c.o.secondsPerMeasurement);
    while (samples.size() < c.o.startIterations && (samples.empty() || Clock::now() < limit)) {
      KILN_ASSIGN_OR_RETURN(auto session, c.client.startSession(llvmSession(uri)));
      if (mode == kMiss) {
        KILN_RETURN_IF_ERROR(
            c.client.workerParameter(c.worker, "service.transition_cache.evict_to_capacity", "0")
                .status());
      }
      const auto start = Clock::now();
      KILN_RETURN_IF_ERROR(session->step(actions, none).status());
      samples.push_back(nanosSince(start));
      KILN_RETURN_IF_ERROR(session->end());
    }
    const LatencySummary step = summarize(samples);
    if (cached) {
      KILN_RETURN_IF_ERROR(expectHits(c, before, step.samples, label + " " + pass));
    }
    const char* names[] = {" fresh", " miss", " cached"};
    addRow(c, label, "first " + pass + names[mode], step, opt);
    return okStatus();
  };
  KILN_RETURN_IF_ERROR(repeat(false));
  KILN_RETURN_IF_ERROR(repeat(true));
  KILN_RETURN_IF_ERROR(first(kFresh));
  KILN_RETURN_IF_ERROR(first(kMiss));
  KILN_RETURN_IF_ERROR(first(kCached));
  return okStatus();
}

Status measureBenchmark(Context& c, const std::string& label, const std::string& uri) {
  // StartSession without the parsed-module cache (its bound at 0: every
  // start parses and verifies; the bytes stay in the benchmark cache, so a
  // generator does not run again), then with it.
  KILN_RETURN_IF_ERROR(setModuleCacheBytes(c, "0"));
  KILN_ASSIGN_OR_RETURN(LatencySummary uncached,
                        sample(c.o.startIterations, c.o.secondsPerMeasurement, [&]() -> Status {
                          KILN_ASSIGN_OR_RETURN(auto s, c.client.startSession(llvmSession(uri)));
                          return s->end();
                        }));
  KILN_RETURN_IF_ERROR(setModuleCacheBytes(c, std::to_string(std::uint64_t{128} << 20)));
  auto warmOptions = llvmSession(uri);
  warmOptions.observations = {"IrInstructionCount"};
  KILN_ASSIGN_OR_RETURN(auto warm, c.client.startSession(warmOptions));
  (label == "small" ? c.smallInstructions : c.largeInstructions) =
      warm->initialObservations().at(0).as<std::int64_t>();
  KILN_ASSIGN_OR_RETURN(LatencySummary cached,
                        sample(c.o.startIterations, c.o.secondsPerMeasurement, [&]() -> Status {
                          KILN_ASSIGN_OR_RETURN(auto s, c.client.startSession(llvmSession(uri)));
                          return s->end();
                        }));
  addRow(c, label, "start uncached", uncached);
  addRow(c, label, "start cached", cached);

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

  for (const std::string pass : {"globaldce", "gvn"}) {
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
  KILN_RETURN_IF_ERROR(waitForLiveSessions(c.client, 0, std::chrono::seconds(60)));
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
  KILN_RETURN_IF_ERROR(waitForLiveSessions(c.client, c.o.liveSessions, std::chrono::seconds(60)));
  const std::uint64_t full = residentBytes(workerPid);
  for (auto& s : sessions) KILN_RETURN_IF_ERROR(s->end());
  sessions.clear();
  KILN_RETURN_IF_ERROR(waitForLiveSessions(c.client, 0, std::chrono::seconds(60)));
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
  KILN_ASSIGN_OR_RETURN(ChildCluster cluster, ChildCluster::create(selfExecutable()));
  KILN_ASSIGN_OR_RETURN(
      ChildProcess * coordinator,
      cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"}));
  KILN_ASSIGN_OR_RETURN(ChildProcess * worker,
                        cluster.spawn({"worker", "--coordinator", coordinator->endpoint, "--slots",
                                       std::to_string(o.slots), "--log-level", "warn",
                                       "--allow-client-tuning"}));  // it sizes the caches
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint;
  options.forceTcp = o.forceTcp;
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(waitForLiveSessions(*client, 0, std::chrono::seconds(60)));
  KILN_ASSIGN_OR_RETURN(auto workers, client->listCluster());
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch, WorkingDirectory::create({}, "kiln-bench-llvm"));
  Context c{*client, workers.at(0).endpoint, scratch.path(), o, mode, report};
  // The floor: a noop step's round trip on the same cluster.
  {
    KILN_ASSIGN_OR_RETURN(
        auto noop, c.client.startSession(client::SessionOptions{"noop", "benchmark://floor"}));
    const std::vector<Value> noEffect{Value(std::int64_t{8})};
    KILN_ASSIGN_OR_RETURN(LatencySummary floor, sample(o.iterations, o.secondsPerMeasurement, [&] {
                            return noop->step(noEffect, std::vector<std::uint32_t>{}).status();
                          }));
    addRow(c, "noop", "step (floor)", floor);
    std::string route = c.client.connectedAddress(noop->endpoint());
    report.notes.push_back(fmt::format("{}: steps went over {}", mode, route));
    // The transport's own floor, on the transport the steps took.
    const bool overIpc = route.rfind("ipc://", 0) == 0;
    KILN_ASSIGN_OR_RETURN(
        LatencySummary raw,
        rawZmqRoundTrips(overIpc ? "ipc://" + (scratch.path() / "floor.ipc").string()
                                 : std::string("tcp://127.0.0.1:0"),
                         o.iterations));
    addRow(c, overIpc ? "raw ipc" : "raw tcp", "zeromq echo (floor)", raw);
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
      "latency: one client request's round trip (client -> worker -> client). 'step (floor)' "
      "is a noop session's step, kiln's own floor; 'zeromq echo (floor)' is a raw ZeroMQ "
      "round trip (64 B, one context per side) on the transport the steps took, measured in "
      "the same run and mode: the transport's floor under every row. 'step P' rows "
      "repeat pass P on one session after a first application (steady state, mostly no "
      "effect); 'first P' rows are the first step of a new episode from the benchmark (a "
      "changing step). 'fresh' = transition cache off (the pass runs); 'miss' = cache on but "
      "emptied before each sample (the pass runs, plus a BLAKE3 of the state's bitcode, the "
      "lookup and recording the transition); 'cached' = the "
      "same transition taken before by another session or episode (the worker's transition "
      "cache replays it; every cached sample is checked to be a hit).");
  report.notes.push_back(
      "opt19_p50_us: one `opt-19 -passes=<same pipeline>` process on the benchmark's bitcode; "
      "opt_pass_us: opt's own wall time in the pass (-time-passes rows without verifier and "
      "writer, median of a few runs), the floor of any fresh step; x_cheaper = opt19_p50_us / "
      "p50_us; x_bound = opt19_p50_us / opt_pass_us, the most a fresh step could reach "
      "(-time-passes reports 0.1 ms steps: opt_pass_us 0 means under 0.1 ms, no x_bound).");
  report.notes.push_back(
      "start uncached: parsed-module cache bound at 0 (parse + verify + print every time; the "
      "bytes come from the benchmark cache); start cached and fork copy the module's bytes and "
      "read them on the session's first use (the first step pays that read once).");
  report.notes.push_back(
      "targets: small step globaldce p50 <= 100 us; fork (small) <= 500 us; start cached <= 1 "
      "ms; every step >= 20x cheaper than opt-19 (a fresh step of a pass whose own time in opt "
      "is over 1/20 of the subprocess, e.g. gvn on the large program, cannot be: x_bound < 20; "
      "such steps meet it when cached); worker <= 1 GiB with the live sessions and "
      "after_vs_idle <= 1.10.");
  return report;
}

}  // namespace kiln::bench
