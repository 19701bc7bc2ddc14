#include "bench/tools_bench.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "common/process/subprocess.h"
#include "compilers/llvm_engine/pass_table.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "tests/support/scratch_dir.h"
#include "tools/agent_tools/tool_executor.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Small kiln-bench-v0 programs (a few hundred instructions), as rollouts'
// prompts are small functions.
const std::vector<std::string> kPrograms = {"adler32",  "crc32",      "fnv_hash", "sieve",
                                            "kmp",      "murmur_mix", "rle",      "bfs",
                                            "heapsort", "quicksort"};
// Passes the plans draw from: the everyday scalar, loop and IPO passes.
const std::vector<std::string> kPassNames = {"mem2reg",
                                             "sroa",
                                             "instcombine",
                                             "simplifycfg",
                                             "early-cse",
                                             "gvn",
                                             "licm",
                                             "loop-rotate",
                                             "dce",
                                             "adce",
                                             "reassociate",
                                             "sccp",
                                             "jump-threading",
                                             "correlated-propagation",
                                             "dse",
                                             "loop-simplify",
                                             "indvars",
                                             "tailcallelim",
                                             "globalopt",
                                             "globaldce",
                                             "ipsccp",
                                             "deadargelim",
                                             "inline",
                                             "memcpyopt",
                                             "bdce",
                                             "loop-deletion",
                                             "sink",
                                             "mldst-motion"};
constexpr const char* kWarmUpPass = "lower-expect";  // in no plan: warms no plan's prefix
constexpr const char* kJudgedAgainst =
    "opt-19 -passes=<same list> subprocess + instruction count, same modules, lists and callers";

struct Plan {
  std::string program;
  std::vector<std::string> passes;
};

struct RowSpec {
  std::string cluster;
  unsigned callers = 1;
  bool shared = false;
  unsigned workers = 0;  // a local cluster's, 0 for the embedded one
};

struct Measured {
  LatencySummary latency;
  double callsPerSecond = 0;
  std::size_t calls = 0, errors = 0;
  std::uint64_t passesReused = 0, passesAsked = 0;
  std::vector<std::vector<std::int64_t>> counts;  // per caller and plan taken; -1: failed
  std::string firstError;
};

struct Context {
  const ToolsBenchOptions& o;
  std::vector<std::string> passes;                // names the tools and the table share
  std::map<std::string, std::string> pipelineOf;  // name -> opt's -passes= text
  std::filesystem::path scratch;
};

// Cold plans: each a program and first two passes not used by any other plan
// of the run (`offset` numbers the run's plans), the rest drawn at random.
std::vector<std::vector<Plan>> coldPlans(const Context& c, unsigned callers, std::size_t offset,
                                         std::mt19937& random) {
  std::vector<std::vector<Plan>> plans(callers);
  const std::size_t p = kPrograms.size(), k = c.passes.size();
  std::uniform_int_distribution<std::size_t> pick(0, k - 1);
  for (unsigned caller = 0; caller < callers; ++caller) {
    for (unsigned i = 0; i < c.o.callsPerCaller; ++i) {
      const std::size_t n = offset + caller * c.o.callsPerCaller + i;
      Plan plan{kPrograms[n % p], {c.passes[(n / p) % k], c.passes[(n / p / k) % k]}};
      while (plan.passes.size() < c.o.passesPerCall) plan.passes.push_back(c.passes[pick(random)]);
      plans[caller].push_back(std::move(plan));
    }
  }
  return plans;
}

// Shared plans, as multi-turn rollouts make them: each caller's calls in
// groups on one program whose rollouts all start with one prefix of
// `sharedPrefix` passes (their first call) and then extend their own list by
// a pass a call up to `passesPerCall`, every call sending its whole list.
std::vector<std::vector<Plan>> sharedPlans(const Context& c, unsigned callers, std::size_t offset,
                                           std::mt19937& random) {
  std::vector<std::vector<Plan>> plans(callers);
  std::uniform_int_distribution<std::size_t> pick(0, c.passes.size() - 1);
  const unsigned turns = c.o.passesPerCall - c.o.sharedPrefix + 1;
  const unsigned callsPerGroup = c.o.rolloutsPerGroup * turns;
  for (unsigned caller = 0; caller < callers; ++caller) {
    Plan rollout;
    std::vector<std::string> prefix;
    for (unsigned i = 0; i < c.o.callsPerCaller; ++i) {
      if (i % callsPerGroup == 0) {
        rollout.program = kPrograms[(offset + caller * 7 + i / callsPerGroup) % kPrograms.size()];
        prefix.clear();
        while (prefix.size() < c.o.sharedPrefix) prefix.push_back(c.passes[pick(random)]);
      }
      if (i % turns == 0) {
        rollout.passes = prefix;
      } else {
        rollout.passes.push_back(c.passes[pick(random)]);
      }
      plans[caller].push_back(rollout);
    }
  }
  return plans;
}

// What one call does: the instruction count after it, or an error.
struct CallResult {
  Status status;
  std::int64_t count = -1;
  std::uint64_t reused = 0;
};
using CallFn = std::function<CallResult(unsigned caller, const Plan& plan)>;

// Runs every caller's plans on a thread of its own, each until its plans or
// the row's time are spent (at least one call each).
Measured measure(const Context& c, const std::vector<std::vector<Plan>>& plans,
                 const CallFn& call) {
  Measured m;
  std::mutex mutex;
  std::vector<std::int64_t> samples;
  std::vector<std::vector<std::int64_t>> counts(plans.size());
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(c.o.secondsPerRow);
  std::vector<std::thread> threads;
  for (unsigned caller = 0; caller < plans.size(); ++caller) {
    threads.emplace_back([&, caller] {
      for (const Plan& plan : plans[caller]) {
        if (!counts[caller].empty() && Clock::now() > deadline) break;
        const auto begin = Clock::now();
        CallResult result = call(caller, plan);
        const auto nanos =
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begin);
        counts[caller].push_back(result.status.ok() ? result.count : -1);
        std::lock_guard lock(mutex);
        samples.push_back(nanos.count());
        m.passesAsked += plan.passes.size();
        m.passesReused += result.reused;
        if (!result.status.ok() && m.errors++ == 0) m.firstError = result.status.toString();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  m.calls = samples.size();
  m.callsPerSecond = m.calls / std::max(seconds, 1e-9);
  m.latency = summarize(samples);
  m.counts = std::move(counts);
  return m;
}

CallResult callTool(agent_tools::ToolExecutor& executor, unsigned caller, const Plan& plan) {
  const json arguments = {{"benchmark", "benchmark://kiln-bench-v0/" + plan.program},
                          {"passes", plan.passes}};
  const json answer =
      json::parse(executor.call(fmt::format("caller-{}", caller), "apply_passes", arguments.dump()),
                  nullptr, false);
  if (answer.is_discarded() || answer.contains("error")) {
    return {internalError(fmt::format("apply_passes: {}", answer.dump()))};
  }
  return {okStatus(), answer["instruction_count"].value("after", std::int64_t{-1}),
          answer.value("passes_reused", std::uint64_t{0})};
}

// What the trainers did: opt on the module, its IR text out, counted.
CallResult callOpt(const Context& c, const Plan& plan) {
  std::string pipeline;
  for (const std::string& pass : plan.passes) {
    pipeline += (pipeline.empty() ? "" : ",") + c.pipelineOf.at(pass);
  }
  Result<ProcessOutput> out =
      runSubprocess({c.o.opt, "-passes=" + pipeline, (c.scratch / (plan.program + ".bc")).string(),
                     "-S", "-o", "-"},
                    std::chrono::seconds(60), {}, std::size_t{64} << 20);
  if (!out.ok()) return {out.status()};
  if (!out->status.success()) {
    return {
        internalError(fmt::format("{} -passes={}: {}", c.o.opt, pipeline, out->status.describe()))};
  }
  return {okStatus(), countIrInstructions(out->stdoutText)};
}

// The share of the plans both ran on whose instruction count they agree;
// the first plan they disagree on into `disagreement`.
double countAgreement(const std::vector<std::vector<Plan>>& plans, const Measured& kiln,
                      const Measured& opt, std::string& disagreement) {
  std::size_t both = 0, same = 0;
  for (std::size_t caller = 0; caller < std::min(kiln.counts.size(), opt.counts.size()); ++caller) {
    const auto& a = kiln.counts[caller];
    const auto& b = opt.counts[caller];
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      if (a[i] < 0 || b[i] < 0) continue;
      ++both;
      same += a[i] == b[i];
      if (a[i] != b[i] && disagreement.empty()) {
        disagreement =
            fmt::format("{} after {}: kiln counts {}, opt-19's output {}", plans[caller][i].program,
                        fmt::join(plans[caller][i].passes, ","), a[i], b[i]);
      }
    }
  }
  return both == 0 ? 0 : double(same) / both;
}

// A pass as one element of a module-level -passes= list: opt takes the
// level of a whole list from its first element, so a list that mixes levels
// names each pass's adaptor, as a trainer's opt command line has to.
std::string optPipelineOf(const llvm_engine::PassInfo& pass) {
  switch (pass.kind) {
    case llvm_engine::PassKind::kModule:
      return pass.pipeline;
    case llvm_engine::PassKind::kCgscc:
      return fmt::format("cgscc({})", pass.pipeline);
    case llvm_engine::PassKind::kFunction:
      return fmt::format("function({})", pass.pipeline);
    case llvm_engine::PassKind::kLoopNest:
    case llvm_engine::PassKind::kLoop:
      return fmt::format("function(loop-mssa({}))", pass.pipeline);
  }
  return pass.pipeline;
}

Status prepare(Context& c) {
  KILN_ASSIGN_OR_RETURN(auto table, llvm_engine::PassTable::fromRegistry());
  for (const std::string& name : kPassNames) {
    auto index = table->find(name);
    if (!index) continue;
    c.passes.push_back(name);
    c.pipelineOf[name] = optPipelineOf(table->at(*index));
  }
  if (c.passes.size() < 2)
    return internalError("kiln bench tools: the pass table lacks the passes");
  for (const std::string& program : kPrograms) {
    const bundled::EmbeddedBenchmark* b = bundled::findKilnBenchV0(program);
    if (b == nullptr) return notFound(fmt::format("no kiln-bench-v0 program {}", program));
    std::ofstream out(c.scratch / (program + ".bc"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(b->bitcode.data()),
              static_cast<std::streamsize>(b->bitcode.size()));
    if (!out) return internalError("kiln bench tools: cannot write the programs' bitcode");
  }
  return okStatus();
}

// One warm-up call per program, with a pass no plan uses: modules parsed,
// sessions placed, before anything is timed.
Status warmUp(agent_tools::ToolExecutor& executor) {
  for (const std::string& program : kPrograms) {
    CallResult result = callTool(executor, 0, Plan{program, {kWarmUpPass}});
    KILN_RETURN_IF_ERROR(result.status);
  }
  return okStatus();
}

void addRow(Report& report, const RowSpec& row, const std::vector<std::vector<Plan>>& plans,
            const Measured& kiln, const Measured& opt, double oneWorkerRate) {
  std::string disagreement;
  const double agree = countAgreement(plans, kiln, opt, disagreement);
  if (!disagreement.empty()) {
    report.notes.push_back(
        fmt::format("{}, {} callers: {}", row.cluster, row.callers, disagreement));
  }
  bench::Row out;
  out.text = {{"cluster", row.cluster},
              {"callers", std::to_string(row.callers)},
              {"prefixes", row.shared ? "shared" : "cold"},
              {"judged_against", kJudgedAgainst}};
  out.numbers = {{"calls", double(kiln.calls)},
                 {"calls_per_s", kiln.callsPerSecond},
                 {"p50_us", kiln.latency.p50us},
                 {"p99_us", kiln.latency.p99us},
                 {"opt_calls_per_s", opt.callsPerSecond},
                 {"opt_p50_us", opt.latency.p50us},
                 {"opt_p99_us", opt.latency.p99us},
                 {"x_p50", opt.latency.p50us / std::max(kiln.latency.p50us, 1e-3)},
                 {"x_calls_per_s", kiln.callsPerSecond / std::max(opt.callsPerSecond, 1e-9)},
                 {"passes_reused_share",
                  kiln.passesAsked == 0 ? 0 : double(kiln.passesReused) / kiln.passesAsked},
                 {"counts_agree", agree},
                 {"errors", double(kiln.errors + opt.errors)}};
  if (row.workers > 0 && oneWorkerRate > 0) {
    out.numbers.push_back({"x_vs_first_cluster", kiln.callsPerSecond / oneWorkerRate});
  }
  report.rows.push_back(std::move(out));
}

// Measures one row: kiln's calls, then opt's on the same plans.
Status runRow(Context& c, Report& report, agent_tools::ToolExecutor& executor, const RowSpec& row,
              std::size_t& offset, std::mt19937& random, double* rate, double firstRate) {
  const auto plans = row.shared ? sharedPlans(c, row.callers, offset, random)
                                : coldPlans(c, row.callers, offset, random);
  offset += std::size_t{row.callers} * c.o.callsPerCaller;
  Measured kiln = measure(c, plans, [&](unsigned caller, const Plan& plan) {
    return callTool(executor, caller, plan);
  });
  Measured opt = measure(c, plans, [&](unsigned, const Plan& plan) { return callOpt(c, plan); });
  if (kiln.errors == kiln.calls) return internalError("every kiln call failed: " + kiln.firstError);
  if (opt.errors == opt.calls) return internalError("every opt-19 call failed: " + opt.firstError);
  for (const Measured* m : {&kiln, &opt}) {
    if (m->errors > 0) report.notes.push_back(fmt::format("{}: {}", row.cluster, m->firstError));
  }
  addRow(report, row, plans, kiln, opt, firstRate);
  if (rate != nullptr) *rate = kiln.callsPerSecond;
  return okStatus();
}

Result<std::unique_ptr<agent_tools::ToolExecutor>> executorFor(const std::string& coordinator,
                                                               unsigned callers) {
  agent_tools::ExecutorOptions options;
  options.client.coordinator = coordinator;
  options.limits.maxConcurrentCallsPerCaller = std::max(16u, callers);
  KILN_ASSIGN_OR_RETURN(auto executor, agent_tools::ToolExecutor::create(options));
  KILN_RETURN_IF_ERROR(warmUp(*executor));
  return executor;
}

}  // namespace

namespace {

// "entry:", "12:", "for.body:  ; preds = ...", "\"a b\":": a name, then ':'.
bool isLabel(std::string_view line) {
  if (line[0] == '"') {
    const std::size_t close = line.find('"', 1);
    return close != std::string_view::npos && close + 1 < line.size() && line[close + 1] == ':';
  }
  const std::size_t colon = line.find(':');
  return colon != std::string_view::npos && line.find_first_of(" =", 0) > colon;
}

// Lines that continue the instruction above: an invoke's or callbr's
// "to label ...", a landingpad's clauses.
bool continuesAnInstruction(std::string_view line) {
  return line.starts_with("to label") || line == "cleanup" || line.starts_with("catch ") ||
         line.starts_with("filter ");
}

}  // namespace

std::int64_t countIrInstructions(std::string_view irText) {
  std::int64_t count = 0;
  bool inBody = false, inSwitch = false;
  std::size_t start = 0;
  while (start < irText.size()) {
    std::size_t end = irText.find('\n', start);
    if (end == std::string_view::npos) end = irText.size();
    std::string_view line = irText.substr(start, end - start);
    start = end + 1;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    if (!inBody) {
      inBody = line.starts_with("define ") && line.ends_with("{");
      continue;
    }
    if (line == "}") {
      inBody = false;
      continue;
    }
    // A switch's cases, one a line, up to its "]" (which may carry
    // metadata: "], !llvm.loop !3").
    if (inSwitch) {
      inSwitch = line[0] != ']';
      continue;
    }
    if (line[0] == ';' || isLabel(line) || continuesAnInstruction(line)) continue;
    inSwitch = line.ends_with("[") && line.find("switch ") != std::string_view::npos;
    ++count;
  }
  return count;
}

ToolsBenchOptions quickToolsBenchOptions() {
  ToolsBenchOptions o;
  o.callers = 2;
  o.callsPerCaller = 12;
  o.secondsPerRow = 3;
  o.rolloutsPerGroup = 6;
  return o;
}

Result<Report> runToolsBench(const ToolsBenchOptions& options) {
  if (options.passesPerCall < 2 || options.sharedPrefix >= options.passesPerCall ||
      options.callers == 0 || options.callsPerCaller == 0 || options.rolloutsPerGroup == 0) {
    return invalidArgument(
        "kiln bench tools: --passes must be at least 2 and above --shared-prefix; --callers, "
        "--calls and --rollouts at least 1");
  }
  testsupport::ScratchDir scratch("kiln-bench-tools");
  Context c{options, {}, {}, scratch.path()};
  KILN_RETURN_IF_ERROR(prepare(c));
  Report report;
  report.title = fmt::format(
      "kiln bench tools: apply_passes + instruction count vs a fresh {} per call; cold = {} "
      "passes, every call a new program and start; shared = groups of {} rollouts from one "
      "{}-pass prefix, each extending its list a pass a call to {}",
      options.opt, options.passesPerCall, options.rolloutsPerGroup, options.sharedPrefix,
      options.passesPerCall);
  std::mt19937 random(options.seed);
  std::size_t offset = 0;
  {
    KILN_ASSIGN_OR_RETURN(auto executor, executorFor("", options.callers));
    for (unsigned callers : {1u, options.callers}) {
      for (bool shared : {false, true}) {
        const RowSpec row{"embedded", callers, shared, 0};
        KILN_RETURN_IF_ERROR(runRow(c, report, *executor, row, offset, random, nullptr, 0));
      }
    }
  }
  double firstRate = 0;
  for (unsigned workers : options.workers) {
    LocalClusterOptions local;
    local.workers = workers;
    local.isolateWorkers = true;
    KILN_ASSIGN_OR_RETURN(auto cluster, LocalCluster::start(local));
    KILN_RETURN_IF_ERROR(cluster->waitUntilReady(std::chrono::seconds(30)));
    KILN_ASSIGN_OR_RETURN(auto executor,
                          executorFor(cluster->coordinatorEndpoint(), options.callers));
    const RowSpec row{fmt::format("--cluster, {} worker{}", workers, workers == 1 ? "" : "s"),
                      options.callers, false, workers};
    double rate = 0;
    KILN_RETURN_IF_ERROR(runRow(c, report, *executor, row, offset, random, &rate, firstRate));
    if (firstRate == 0) firstRate = rate;
  }
  report.notes.push_back(fmt::format(
      "x_p50 = opt-19's p50 / kiln's p50 (issue 46's target: >= 20); x_calls_per_s likewise; "
      "x_vs_first_cluster = calls/s against the first --cluster row; {} CPUs",
      std::thread::hardware_concurrency()));
  report.notes.push_back(
      "counts_agree: the share of calls both ran whose instruction count kiln and the count of "
      "opt-19's output agree on. opt runs a list as one pipeline, keeping analyses from pass to "
      "pass; kiln runs it pass by pass, as opt run once per pass does, so a list may end a few "
      "instructions apart");
  return report;
}

}  // namespace kiln::bench
