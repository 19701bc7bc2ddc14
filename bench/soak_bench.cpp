#include "bench/soak_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "bench/host_supervisor.h"
#include "bench/kiln_executable.h"
#include "bench/soak_growth.h"
#include "bench/soak_sessions.h"
#include "tests/support/child_cluster.h"
#include "tests/support/process_probe.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using SteadyTime = std::chrono::steady_clock;

constexpr const char* kExperiment = "soak";
constexpr unsigned kChannelDescriptors = 4;  // per client channel to a live host
// Small kiln-bench-v0 programs: many sessions and replays stay affordable.

Result<std::vector<SessionWeight>> parseMix(const std::string& text) {
  std::vector<SessionWeight> mix;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    std::size_t colon = item.find(':');
    SessionWeight w{item.substr(0, colon), 1};
    if (colon != std::string::npos) {
      try {
        w.weight = static_cast<unsigned>(std::stoul(item.substr(colon + 1)));
      } catch (const std::exception&) {
        w.weight = 0;
      }
    }
    if (w.type.empty() || w.weight == 0) {
      return invalidArgument(
          fmt::format("--mix item '{}' is not TYPE or TYPE:WEIGHT with a positive weight", item));
    }
    mix.push_back(std::move(w));
  }
  if (mix.empty()) return invalidArgument("--mix names no session type (e.g. llvm:5,noop:3)");
  return mix;
}

// One reading of one process.
struct Sample {
  double seconds = 0;
  std::string label;
  int pid = 0;
  double rssMib = 0;
  unsigned fds = 0;
  unsigned compilers = 0, zombies = 0;  // non-kiln processes below it (not below another kiln)
  std::size_t workingEntries = 0;       // under its working-directory base, its own dir aside
  bool gone = false;                    // its process no longer exists (not killed by us: crashed)
};

bool isKiln(const testsupport::ProcessInfo& p) { return p.name.rfind("kiln", 0) == 0; }

// Compilers of `pid`: the processes below it that are not kiln processes nor
// below one (a worker's opt-19; for this process, orphans it adopted).
void countCompilers(int pid, Sample& sample) {
  std::vector<testsupport::ProcessInfo> below = testsupport::descendantsOf(pid);
  std::map<int, const testsupport::ProcessInfo*> byPid;
  for (const testsupport::ProcessInfo& p : below) byPid[p.pid] = &p;
  for (const testsupport::ProcessInfo& p : below) {
    bool underKiln = isKiln(p);
    for (int up = p.ppid; !underKiln && up != pid;) {
      auto parent = byPid.find(up);
      if (parent == byPid.end()) break;
      underKiln = isKiln(*parent->second);
      up = parent->second->ppid;
    }
    if (underKiln) continue;
    ++(p.zombie() ? sample.zombies : sample.compilers);
  }
}

struct Watched {
  std::string label;
  int pid = 0;
  std::filesystem::path workBase;  // empty: not a worker
};

Sample readSample(const Watched& w, double seconds) {
  Sample s;
  s.seconds = seconds;
  s.label = w.label;
  s.pid = w.pid;
  if (w.pid == 0) return s;  // down between a kill and its replacement
  auto info = testsupport::readProcess(w.pid);
  s.gone = !info || info->zombie();
  s.rssMib = residentBytes(w.pid) / 1048576.0;
  s.fds = testsupport::openDescriptors(w.pid);
  countCompilers(w.pid, s);
  if (!w.workBase.empty()) {
    // The live worker's own directory is expected; what is in it, and the
    // directory of any killed predecessor, is left behind.
    testsupport::DirectoryCount below = testsupport::countBelow(w.workBase);
    s.workingEntries = below.nested + (below.subdirectories > 0 ? below.subdirectories - 1 : 0);
  }
  return s;
}

// Samples every `every` on its own thread (the session thread may sit in a
// replay for seconds), reaping adopted orphans as it goes.
class Sampler {
 public:
  using Snapshot = std::function<std::vector<Watched>()>;
  Sampler(Snapshot snapshot, Duration every, testsupport::OrphanReaper& reaper)
      : snapshot_(std::move(snapshot)), every_(every), reaper_(reaper), start_(SteadyTime::now()) {
    sampleNow();
    thread_ = std::thread([this] { run(); });
  }
  ~Sampler() { stop(); }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Also called by the owner after stop() for the final reading.
  std::vector<Sample> sampleNow() {
    reaped_ += reaper_.reapOrphans("kiln");
    double seconds = std::chrono::duration<double>(SteadyTime::now() - start_).count();
    std::vector<Sample> taken;
    for (const Watched& w : snapshot_()) taken.push_back(readSample(w, seconds));
    std::lock_guard lock(mutex_);
    samples_.insert(samples_.end(), taken.begin(), taken.end());
    return taken;
  }
  std::vector<Sample> samples() const {
    std::lock_guard lock(mutex_);
    return samples_;
  }
  unsigned reaped() const { return reaped_; }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, every_, [this] { return stopping_; })) {
      lock.unlock();
      sampleNow();
      lock.lock();
    }
  }
  Snapshot snapshot_;
  Duration every_;
  testsupport::OrphanReaper& reaper_;
  SteadyTime::time_point start_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<Sample> samples_;
  std::atomic<unsigned> reaped_{0};
  std::thread thread_;
};

std::uint64_t liveSessionsOnWorkers(client::Client& client) {
  auto workers = client.listCluster();
  if (!workers.ok()) return ~std::uint64_t{0};
  std::uint64_t live = 0;
  for (const auto& w : *workers) live += w.liveSessions;
  return live;
}

// Everything that must be gone, summed over the final readings.
struct Leftovers {
  std::uint64_t compilers = 0, zombies = 0, entries = 0;
  bool none() const { return compilers + zombies + entries == 0; }
};

Leftovers leftovers(const std::vector<Sample>& readings) {
  Leftovers left;
  for (const Sample& s : readings) {
    left.compilers += s.compilers;
    left.zombies += s.zombies;
    left.entries += s.workingEntries;
  }
  return left;
}

void addSeries(Report& report, const std::vector<Sample>& samples) {
  for (const Sample& s : samples) {
    Row row;
    row.text = {{"process", s.label}};
    row.numbers = {{"t_s", s.seconds},
                   {"pid", double(s.pid)},
                   {"rss_mib", s.rssMib},
                   {"fds", double(s.fds)},
                   {"compilers", double(s.compilers)},
                   {"zombies", double(s.zombies)},
                   {"wd_entries", double(s.workingEntries)}};
    report.rows.push_back(std::move(row));
  }
}

// Per process: RSS at start and end, growth, descriptors; returns the
// descriptor growth beyond the slack of processes that lived throughout.
std::uint64_t addSummaries(Report& report, const std::vector<Sample>& samples, double runSeconds,
                           unsigned slack, unsigned hosts, unsigned& growing, unsigned& crashes) {
  std::vector<std::string> labels;
  std::map<std::string, std::vector<const Sample*>> byLabel;
  for (const Sample& s : samples) {
    if (byLabel[s.label].empty()) labels.push_back(s.label);
    byLabel[s.label].push_back(&s);
  }
  std::uint64_t fdGrowth = 0;
  for (const std::string& label : labels) {
    const auto& series = byLabel[label];
    const Sample& first = *series.front();
    const Sample& last = *series.back();
    std::vector<RssPoint> points;  // of the process running at the end
    std::map<int, bool> pids;
    bool crashed = false;
    for (const Sample* s : series) {
      if (s->pid != 0) pids[s->pid] = true;
      crashed = crashed || s->gone;
      if (s->pid == last.pid && !s->gone) points.push_back({s->seconds, s->rssMib});
    }
    // A killed worker may be read between its SIGKILL and its replacement:
    // only a process that was never replaced can be said to have crashed.
    crashed = crashed && pids.size() == 1;
    crashes += crashed ? 1 : 0;
    GrowthJudgement growth = judgeGrowth(points, runSeconds);
    growing += growth.growing ? 1 : 0;
    bool throughout = first.pid == last.pid && last.pid != 0;
    // The benchmark's first reading precedes its clients' channels to the
    // hosts, which they keep (a socket, its monitor, the connection).
    unsigned allowed = slack + (label == "bench" ? kChannelDescriptors * hosts : 0);
    if (throughout && last.fds > first.fds + allowed) fdGrowth += last.fds - first.fds - allowed;
    Row row;
    row.text = {{"process", label},
                {"rss_growth", crashed          ? "CRASHED"
                               : !growth.judged ? "not judged (restarted)"
                               : growth.growing ? "GROWING"
                                                : "flat"}};
    row.numbers = {{"processes", double(pids.size())}, {"start_mib", first.rssMib},
                   {"end_mib", last.rssMib},           {"mid3_mib", growth.middleMib},
                   {"last3_mib", growth.lastMib},      {"slope_mib_min", growth.slopeMibPerMinute},
                   {"start_fds", double(first.fds)},   {"end_fds", double(last.fds)}};
    report.rows.push_back(std::move(row));
  }
  return fdGrowth;
}

}  // namespace

Result<Report> runSoakBench(const SoakOptions& o, SoakFigures* out) {
  if (o.sessions == 0 || o.workers == 0 || o.slots == 0) {
    return invalidArgument("soak needs at least 1 session, 1 worker and 1 slot");
  }
  if (o.seconds <= 0 || o.sampleEvery <= 0 || o.killEvery < 0) {
    return invalidArgument(fmt::format(
        "--duration ({}) and --sample-every ({}) must be positive, --kill-every ({}) not negative",
        o.seconds, o.sampleEvery, o.killEvery));
  }
  if (o.killEvery > 0 && o.workers < 2) {
    return invalidArgument("kills need at least 2 workers (the first is never killed)");
  }
  KILN_ASSIGN_OR_RETURN(std::vector<SessionWeight> mix, parseMix(o.mix));
  const std::uint64_t seed = o.seed != 0 ? o.seed : std::random_device{}();

  testsupport::OrphanReaper reaper;  // before any child: compilers of killed workers come to us
  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(
                            o.kiln.empty() ? kilnExecutable() : o.kiln, o.logDirectory));
  KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * coordinator,
                        cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0",
                                       "--heartbeat-seconds", "0.2", "--log-level", "off"}));
  auto hostArgs = [&](const std::string& label, bool nest) {
    std::vector<std::string> args = testsupport::benchWorkerArgs(
        coordinator->endpoint, o.slots, o.logDirectory.empty() ? "off" : "warn");
    if (nest) {
      // Each experiment in its own child process: a crash in one is contained.
      args[0] = "nest";
      args.insert(args.begin() + 1, "--isolate");
    }
    args.insert(args.end(), {"--work-dir", (cluster.directory() / ("work-" + label)).string()});
    return args;
  };
  std::vector<Restartable> hosts;
  for (unsigned i = 0; i <= o.workers; ++i) {
    std::string label = i < o.workers ? fmt::format("worker-{}", i) : "nest";
    Restartable host{label, hostArgs(label, i == o.workers)};
    // Killed at random: every plain worker but the first. The first and the
    // nesting host are only restarted if they stop by themselves, so their
    // memory is judged over the whole run when nothing crashes in them.
    host.killable = o.killEvery > 0 && i != 0 && i != o.workers;
    KILN_ASSIGN_OR_RETURN(host.running, cluster.spawn(host.args));
    hosts.push_back(std::move(host));
  }

  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator->endpoint;
  clientOptions.requestTimeout = 30s;
  clientOptions.leasePeriod = 500ms;
  KILN_ASSIGN_OR_RETURN(auto plain, client::Client::connect(clientOptions));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*plain, o.workers + 1, 20s));
  ExperimentSpec spec;
  spec.name = kExperiment;
  KILN_ASSIGN_OR_RETURN(client::ExperimentStatus opened, plain->openExperiment(spec));
  KILN_RETURN_IF_ERROR(plain->waitForExperiment(kExperiment, 1, 20s).status());
  clientOptions.experiment = kExperiment;
  clientOptions.experimentKey = opened.key;
  KILN_ASSIGN_OR_RETURN(auto nested, client::Client::connect(clientOptions));

  Report report;
  report.title =
      "kiln bench soak: sessions starting, stepping, forking and ending while workers "
      "are SIGKILLed; memory, descriptors, compilers and files over time";
  std::vector<std::string> skipped;
  std::erase_if(mix, [&](const SessionWeight& w) {
    if (plain->getSpaces(w.type).ok()) return false;
    skipped.push_back(w.type);
    return true;
  });
  if (mix.empty()) return notFound("no session type of --mix is served by this kiln build");
  SlotPlan plan;
  plan.slots = o.sessions;
  plan.mix = mix;
  for (const std::string& p : kSmallPrograms)
    plan.benchmarks.push_back("benchmark://kiln-bench-v0/" + p);

  std::vector<Watched> fixed{{"bench", ::getpid(), {}},
                             {"coordinator", coordinator->process.pid(), {}}};
  auto workBase = [&](const std::string& label) {
    return label == "bench" || label == "coordinator" ? std::filesystem::path()
                                                      : cluster.directory() / ("work-" + label);
  };
  HostSupervisor supervisor(
      cluster, std::move(hosts),
      KillPacing{0.5 * o.killEvery, 1.5 * o.killEvery, seed, o.killEvery > 0});
  // What runs now under each label (a replaced host has a new pid).
  auto watchedNow = [&] {
    std::vector<Watched> now = fixed;
    for (const RunningProcess& r : supervisor.running()) now.push_back({r.label, r.pid, {}});
    for (Watched& w : now) w.workBase = workBase(w.label);
    return now;
  };
  Sampler sampler(watchedNow, std::chrono::milliseconds(static_cast<long>(o.sampleEvery * 1000)),
                  reaper);

  // Replays that check ended states run on the first plain worker, which
  // is never killed: a check does not depend on the restores it checks.
  auto replayEndpoint = [&] {
    for (const RunningProcess& r : supervisor.running()) {
      if (r.label == "worker-0") return r.endpoint;
    }
    return std::string();
  };
  SessionSlots slots(*plain, nested.get(), plan, seed, replayEndpoint);
  const auto started = SteadyTime::now();
  const auto until = started + std::chrono::milliseconds(static_cast<long>(o.seconds * 1000));
  while (SteadyTime::now() < until) slots.round();
  SoakFigures figures;
  // Hosts stay supervised until the end: ending sessions may still crash one.

  slots.endAll();
  Status closed = plain->closeExperiment(kExperiment);
  const double runSeconds = std::chrono::duration<double>(SteadyTime::now() - started).count();

  // Ending is asynchronous on the workers (sessions, their compilers and
  // directories go a moment later): wait briefly for the facts to settle.
  sampler.stop();
  std::vector<Sample> final;
  const auto settle = SteadyTime::now() + 15s;
  do {
    std::this_thread::sleep_for(500ms);
    figures.liveSessions = liveSessionsOnWorkers(*plain);
    final.clear();
    for (const Watched& w : watchedNow()) final.push_back(readSample(w, runSeconds));
    reaper.reapOrphans("kiln");
  } while ((figures.liveSessions != 0 || !leftovers(final).none()) && SteadyTime::now() < settle);
  final = sampler.sampleNow();  // the verdict's reading, and the last point of every series
  supervisor.stop();
  figures.kills = supervisor.kills();
  figures.restartsAfterCaughtCrash = supervisor.restartsAfterCaughtCrash();
  figures.workersDiedOnTheirOwn = supervisor.unexpectedDeaths();

  const SoakCounters& c = slots.counters();
  figures.stepsAttempted = c.stepsAttempted;
  figures.stepsCompleted = c.stepsCompleted;
  figures.stepsLost = c.stepsLost;
  figures.compileErrors = c.compileErrors;
  figures.restoreCompileErrors = c.restoreCompileErrors;
  figures.forksRefused = c.forksRefused;
  figures.states = slots.checks().counts();
  for (const auto& [type, counts] : figures.states) figures.mismatched += counts.mismatched;
  figures.stateChecksFailed = slots.checks().failed();
  figures.started = c.started;
  figures.forked = c.forked;
  figures.ended = c.ended;
  figures.requestsFailed = c.startsFailed + c.forksFailed + c.endsFailed;
  figures.restored = plain->restoredSessions() + nested->restoredSessions();
  Leftovers left = leftovers(final);
  figures.compilers = left.compilers;
  figures.zombies = left.zombies;
  figures.workingDirectoryEntries = left.entries;
  figures.orphansReaped = sampler.reaped();

  std::vector<Sample> all = sampler.samples();
  addSeries(report, all);
  figures.descriptorGrowth = addSummaries(report, all, runSeconds, o.descriptorSlack, o.workers + 1,
                                          figures.growingProcesses, figures.crashes);
  Row end;
  end.numbers = {{"live_sessions", double(figures.liveSessions)},
                 {"compilers", double(figures.compilers)},
                 {"zombies", double(figures.zombies)},
                 {"wd_entries", double(figures.workingDirectoryEntries)},
                 {"fd_growth", double(figures.descriptorGrowth)},
                 {"orphans_reaped", double(figures.orphansReaped)}};
  report.rows.push_back(std::move(end));
  Row counters;
  counters.numbers = {{"steps_attempted", double(c.stepsAttempted)},
                      {"steps_completed", double(c.stepsCompleted)},
                      {"steps_lost", double(c.stepsLost)},
                      {"compile_errors", double(c.compileErrors)},
                      {"restore_compile_errors", double(c.restoreCompileErrors)},
                      {"forks_refused", double(c.forksRefused)},
                      {"sessions_started", double(c.started)},
                      {"sessions_forked", double(c.forked)},
                      {"sessions_ended", double(c.ended)},
                      {"sessions_restored", double(figures.restored)},
                      {"episodes_done", double(c.episodesFinished)},
                      {"requests_failed", double(figures.requestsFailed)},
                      {"state_checks_failed", double(figures.stateChecksFailed)},
                      {"workers_killed", double(figures.kills)},
                      {"workers_died_on_their_own", double(figures.workersDiedOnTheirOwn)},
                      {"restarts_after_caught_crash", double(figures.restartsAfterCaughtCrash)}};
  // Every type the soak can check, mixed in or not: the fields are always there.
  for (const auto& [type, kind] : stateCheckKinds()) {
    std::string field = type;
    std::replace(field.begin(), field.end(), '-', '_');
    auto counts = figures.states.find(type);
    const StateCheckCounts none;
    const StateCheckCounts& found = counts != figures.states.end() ? counts->second : none;
    counters.numbers.push_back({field + "_states_checked", double(found.checked)});
    counters.numbers.push_back({kind.mismatchField, double(found.mismatched)});
  }
  report.rows.push_back(std::move(counters));

  report.notes.push_back(fmt::format(
      "seed {}; {:.0f} s, {} session slots, mix {}; {} plain workers and a nesting host with {} "
      "slots each; {}; a sample every {} s",
      seed, runSeconds, o.sessions, o.mix, o.workers, o.slots,
      o.killEvery > 0 ? fmt::format("a kill every {}-{} s of worker-1..{}", 0.5 * o.killEvery,
                                    1.5 * o.killEvery, o.workers - 1)
                      : std::string("no kills"),
      o.sampleEvery));
  if (!skipped.empty()) {
    report.notes.push_back(
        fmt::format("not served by this build, left out of the mix: {}", fmt::join(skipped, ", ")));
  }
  report.notes.push_back(
      "compilers/zombies: non-kiln processes below a process (for bench: orphans of killed "
      "workers it adopted as subreaper); wd_entries: files and directories under a worker's "
      "working-directory base besides its own directory; rss_growth compares the last third "
      "with the middle third of the run (first third = warm-up)");
  report.notes.push_back(
      "steps count requests, not sessions (the observation-only step that reads an ending "
      "session's state included): steps_attempted = steps_completed + compile_errors + "
      "restore_compile_errors + steps_lost. A compile error (the step breaks or crashes the "
      "compiler) is a typed answer that ends the episode, not a loss; a restore compile error "
      "is a step whose session was restored and whose replay of steps that had all succeeded "
      "got one: the replay did not reproduce the session, so it fails the run, as forks_refused "
      "(a fork whose parent's restore got one) does. Lost is a step without an answer, with "
      "another error, or whose session could not be restored; requests_failed counts starts, "
      "forks and ends that failed");
  report.notes.push_back(
      "every session that ended with a known state (not after a compile error or a lost step) "
      "is checked: a noop Sum against the sum of the actions answered; an llvm IrSha1, and an "
      "mlgo-inline session's Decisions, Features and NativeSize, against a replay of the same "
      "benchmark and actions, one step request each, on a fresh session on worker-0 (never "
      "killed), as a restore replays; state_checks_failed: replays that could not run. Wrong "
      "states, failed checks, lost steps, failed requests and workers_died_on_their_own (hosts "
      "that died without being killed, apart from workers_killed and "
      "restarts_after_caught_crash) fail the run");
  for (const std::string& failure : slots.failures()) report.notes.push_back("first " + failure);
  if (!closed.ok()) report.notes.push_back("closing the experiment: " + closed.toString());
  if (!supervisor.problem().empty()) {
    report.notes.push_back("supervisor: " + supervisor.problem());
  }
  report.notes.push_back(
      "restarts_after_caught_crash: hosts (or an isolated nesting child, not counted here) that "
      "caught a crash inside LLVM, answered it as a compile error, and stopped to be restarted "
      "because their memory could be damaged; their sessions were restored by replay");
  std::vector<std::string> faults;
  if (figures.liveSessions != 0)
    faults.push_back(fmt::format("{} sessions live", figures.liveSessions));
  if (figures.compilers != 0) faults.push_back(fmt::format("{} compilers", figures.compilers));
  if (figures.zombies != 0) faults.push_back(fmt::format("{} zombies", figures.zombies));
  if (figures.workingDirectoryEntries != 0) {
    faults.push_back(fmt::format("{} working-directory entries", figures.workingDirectoryEntries));
  }
  if (figures.descriptorGrowth != 0) {
    faults.push_back(fmt::format("{} descriptors over the slack", figures.descriptorGrowth));
  }
  if (figures.crashes != 0) {
    faults.push_back(fmt::format("{} processes died without being killed", figures.crashes));
  }
  if (figures.workersDiedOnTheirOwn != 0) {
    faults.push_back(fmt::format("{} workers died on their own, besides the {} killed",
                                 figures.workersDiedOnTheirOwn, figures.kills));
  }
  if (c.stepsLost != 0) faults.push_back(fmt::format("{} steps lost", c.stepsLost));
  if (c.restoreCompileErrors + c.forksRefused != 0) {
    faults.push_back(fmt::format("{} steps and {} forks got a compile error replaying a history",
                                 c.restoreCompileErrors, c.forksRefused));
  }
  if (figures.requestsFailed != 0) {
    faults.push_back(fmt::format("{} starts, forks or ends failed", figures.requestsFailed));
  }
  for (const auto& [type, counts] : figures.states) {
    if (counts.mismatched != 0) {
      faults.push_back(
          fmt::format("{} of {} {} states wrong", counts.mismatched, counts.checked, type));
    }
  }
  if (figures.stateChecksFailed != 0) {
    faults.push_back(fmt::format("{} state checks could not run", figures.stateChecksFailed));
  }
  report.notes.push_back(fmt::format(
      "VERDICT: {}{}{}",
      figures.passed() ? "PASS: nothing left behind, no step lost, every state checked right"
                       : "FAIL: ",
      fmt::join(faults, ", "),
      figures.growingProcesses != 0
          ? fmt::format("; RSS growth flagged in {} processes", figures.growingProcesses)
          : std::string("; no sustained RSS growth")));
  if (out != nullptr) *out = figures;
  return report;
}

}  // namespace kiln::bench
