// The agent's episodes go through a real worker (session, replies, caches);
// the builds it is compared with are made here with the same library calls
// the worker makes (compilers/mlgo_session/reference_build.h), plus the command line
// the worker ran before issue 42, so that the "before" column is what users
// were given then.
#include "bench/mlgo_baseline.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>

#include "common/process/working_directory.h"
#include "compilers/mlgo_session/module_flags.h"
#include "compilers/mlgo_session/reference_build.h"
#include "programs/datasets/registry.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using mlgo_channel::AdvisorKind;

// One module under one kind: every size the row sets side by side.
struct Comparison {
  std::string uri;
  std::int64_t agent = 0;           // the DefaultAdvice agent's NativeSize, through the worker
  std::int64_t sessionDefault = 0;  // its DefaultNativeSize
  std::int64_t reward = 0;          // its Reward:NativeSizeSaved
  std::int64_t sessionLlvm = 0;     // its LlvmDefaultNativeSize
  std::int64_t oldBaseline = 0;     // LLVM's default build without the module's flags
  mlgo_session::Build reference;    // built here
  mlgo_session::Build llvmDefault;  // built here, with the module's flags
};

// The mlgo-compile job steps on one module (inliner only).
struct JobComparison {
  std::int64_t inlineDefault = 0;  // {inline-default, native-size}
  std::int64_t llvmPipeline = 0;   // {compile -passes=scc-oz-module-inliner, native-size}
};

struct ModuleSet {
  std::string name;
  std::vector<std::string> uris;
};

const char* typeName(AdvisorKind kind) {
  return kind == AdvisorKind::kInliner ? "mlgo-inline" : "mlgo-regalloc";
}

Result<std::vector<ModuleSet>> moduleSets(const MlgoBaselineOptions& options,
                                          const datasets::DatasetRegistry& registry) {
  std::vector<ModuleSet> sets;
  if (options.kilnBench) {
    KILN_ASSIGN_OR_RETURN(std::vector<std::string> uris,
                          registry.benchmarkUris("benchmark://kiln-bench-v0"));
    sets.push_back({"kiln-bench-v0", std::move(uris)});
  }
  if (options.csmithSeeds > 0) {
    ModuleSet csmith{"csmith-v0", {}};
    for (unsigned seed = 1; seed <= options.csmithSeeds; ++seed) {
      csmith.uris.push_back(fmt::format("generator://csmith-v0/{}", seed));
    }
    sets.push_back(std::move(csmith));
  }
  for (const OperatorDataset& corpus : options.corpora) {
    std::size_t limit = options.maxCorpusModules == 0 ? std::numeric_limits<std::size_t>::max()
                                                      : options.maxCorpusModules;
    KILN_ASSIGN_OR_RETURN(std::vector<std::string> uris,
                          registry.benchmarkUris("benchmark://" + corpus.name, limit));
    sets.push_back({corpus.name, std::move(uris)});
  }
  return sets;
}

Result<std::vector<Value>> observe(client::Session& session, std::vector<std::string> names) {
  KILN_ASSIGN_OR_RETURN(client::StepResult figures, session.step({}, names));
  return figures.observations;
}

// Answers DefaultAdvice at every decision, as a user's default agent would.
Status playDefaultAgent(client::Client& client, AdvisorKind kind, const std::string& uri,
                        Comparison& out) {
  client::SessionOptions options;
  options.sessionType = typeName(kind);
  options.benchmark = uri;
  options.observations = {"DefaultAdvice"};
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Session> session, client.startSession(options));
  std::int64_t advice = session->initialObservations().front().as<std::int64_t>();
  auto until = std::chrono::steady_clock::now() + 600s;
  bool ended = false;
  for (int step = 0; step < 1'000'000 && !ended; ++step) {
    if (std::chrono::steady_clock::now() > until) {
      return timeoutError(uri + ": the episode did not end within 600 s");
    }
    KILN_ASSIGN_OR_RETURN(
        client::StepResult stepped,
        session->step({Value(advice)}, std::vector<std::string>{"DefaultAdvice"}));
    ended = stepped.endOfEpisode;
    if (!ended) advice = stepped.observations.front().as<std::int64_t>();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Value> figures,
                        observe(*session, {"NativeSize", "DefaultNativeSize",
                                           "Reward:NativeSizeSaved", "LlvmDefaultNativeSize"}));
  out.agent = figures[0].as<std::int64_t>();
  out.sessionDefault = figures[1].as<std::int64_t>();
  out.reward = figures[2].as<std::int64_t>();
  out.sessionLlvm = figures[3].as<std::int64_t>();
  return session->end();
}

Result<std::int64_t> runJob(client::Client& client, const std::string& uri,
                            const std::string& spec) {
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = uri;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Session> session, client.startSession(options));
  KILN_ASSIGN_OR_RETURN(client::StepResult done,
                        session->step({Value(spec)}, std::vector<std::string>{"NativeSize"}));
  std::int64_t size = done.observations.at(0).as<std::int64_t>();
  KILN_RETURN_IF_ERROR(session->end());
  return size;
}

// The builds made in this process, on the module as the worker has it.
Status buildHere(AdvisorKind kind, const std::filesystem::path& input,
                 const mlgo_session::ModuleToolFlags& flags, const std::filesystem::path& directory,
                 Comparison& out) {
  mlgo_session::BuildRequest request;
  request.kind = kind;
  request.input = input;
  request.flags = mlgo_session::advisorModuleFlags(kind, flags);
  request.workDirectory = directory;
  request.deadline = std::chrono::steady_clock::now() + 600s;
  KILN_ASSIGN_OR_RETURN(out.reference, mlgo_session::referenceBuild(request));
  KILN_ASSIGN_OR_RETURN(out.llvmDefault, mlgo_session::llvmDefaultBuild(request));
  // Before issue 42 the worker built its baseline without the module's flags.
  request.flags.clear();
  KILN_ASSIGN_OR_RETURN(mlgo_session::Build old, mlgo_session::llvmDefaultBuild(request));
  out.oldBaseline = old.nativeSize;
  return okStatus();
}

// Sum, mean and largest |value| of a column.
struct Column {
  double sum = 0;
  double maxAbs = 0;
  void add(double value) {
    sum += value;
    maxAbs = std::max(maxAbs, std::fabs(value));
  }
  double mean(std::size_t n) const { return n == 0 ? 0 : sum / static_cast<double>(n); }
};

double percentOf(std::int64_t part, std::int64_t whole) {
  return whole == 0 ? 0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

Row kindRow(const std::string& set, AdvisorKind kind, const std::vector<Comparison>& modules) {
  std::size_t beforeEqual = 0, afterEqual = 0, nonzeroRewards = 0, hereMatchesWorker = 0;
  std::size_t bytesIdentical = 0, sizeEqual = 0;
  Column beforePct, beforeBytes, afterBytes, llvmPct, llvmBytes;
  for (const Comparison& m : modules) {
    beforeEqual += m.oldBaseline == m.agent;
    beforePct.add(percentOf(m.oldBaseline - m.agent, m.oldBaseline));
    beforeBytes.add(static_cast<double>(m.oldBaseline - m.agent));
    afterEqual += m.sessionDefault == m.agent;
    nonzeroRewards += m.reward != 0;
    afterBytes.add(static_cast<double>(m.sessionDefault - m.agent));
    hereMatchesWorker +=
        m.reference.nativeSize == m.sessionDefault && m.llvmDefault.nativeSize == m.sessionLlvm;
    bytesIdentical += m.reference.output == m.llvmDefault.output;
    sizeEqual += m.reference.nativeSize == m.llvmDefault.nativeSize;
    llvmPct.add(
        percentOf(m.llvmDefault.nativeSize - m.reference.nativeSize, m.llvmDefault.nativeSize));
    llvmBytes.add(static_cast<double>(m.llvmDefault.nativeSize - m.reference.nativeSize));
  }
  std::size_t n = modules.size();
  Row row;
  row.text = {{"set", set}, {"type", typeName(kind)}};
  row.numbers = {{"modules", double(n)},
                 {"before_equal", double(beforeEqual)},
                 {"before_mean_reward_pct", beforePct.mean(n)},
                 {"before_max_abs_bytes", beforeBytes.maxAbs},
                 {"after_equal", double(afterEqual)},
                 {"after_nonzero_rewards", double(nonzeroRewards)},
                 {"after_max_abs_bytes", afterBytes.maxAbs},
                 {"builds_here_match_worker", double(hereMatchesWorker)},
                 {"llvm_bytes_identical", double(bytesIdentical)},
                 {"llvm_size_equal", double(sizeEqual)},
                 {"llvm_mean_diff_pct", llvmPct.mean(n)},
                 {"llvm_max_abs_bytes", llvmBytes.maxAbs}};
  return row;
}

// Which modules a row's llvm_* columns count as different, with their sizes.
std::string differences(const std::string& set, AdvisorKind kind,
                        const std::vector<Comparison>& modules) {
  std::vector<std::string> listed;
  for (const Comparison& m : modules) {
    if (m.reference.output == m.llvmDefault.output) continue;
    listed.push_back(fmt::format("{} ({} B, LLVM default {} B)", m.uri, m.reference.nativeSize,
                                 m.llvmDefault.nativeSize));
  }
  if (listed.empty()) return {};
  return fmt::format("{} {}: the reference build is not LLVM's default build's bytes on {}", set,
                     typeName(kind), fmt::join(listed, ", "));
}

Row jobRow(const std::string& set, const std::vector<Comparison>& inliner,
           const std::vector<JobComparison>& jobs) {
  std::size_t inlineEqual = 0, pipelineEqual = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    inlineEqual += jobs[i].inlineDefault == inliner[i].sessionDefault;
    pipelineEqual += jobs[i].llvmPipeline == inliner[i].sessionLlvm;
  }
  Row row;
  row.text = {{"set", set}, {"type", "mlgo-compile"}};
  row.numbers = {{"modules", double(jobs.size())},
                 {"inline_default_equal", double(inlineEqual)},
                 {"llvm_pipeline_equal", double(pipelineEqual)}};
  return row;
}

constexpr const char* kInlineDefaultJob =
    R"({"steps":[{"kind":"inline-default"},{"kind":"native-size"}]})";
constexpr const char* kLlvmPipelineJob =
    R"({"steps":[{"kind":"compile","flags":["-passes=scc-oz-module-inliner"]},)"
    R"({"kind":"native-size"}]})";

}  // namespace

Result<Report> runMlgoBaselineBench(const MlgoBaselineOptions& options) {
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch,
                        WorkingDirectory::create({}, "kiln-mlgo-baseline"));
  datasets::DatasetConfig config;
  for (const OperatorDataset& corpus : options.corpora) {
    config.corpora.push_back({corpus.name, corpus.root});
  }
  KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry registry,
                        datasets::DatasetRegistry::create(std::move(config)));
  KILN_ASSIGN_OR_RETURN(std::vector<ModuleSet> sets, moduleSets(options, registry));

  LocalClusterOptions clusterOptions;
  clusterOptions.log.level = spdlog::level::off;
  clusterOptions.worker.slots = 1;
  clusterOptions.worker.settings.datasets = options.corpora;
  clusterOptions.worker.workingDirectoryBase = scratch.path() / "worker";
  std::filesystem::create_directories(clusterOptions.worker.workingDirectoryBase);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<LocalCluster> cluster,
                        LocalCluster::start(std::move(clusterOptions)));
  KILN_RETURN_IF_ERROR(cluster->waitUntilReady(30s));
  client::ClientOptions clientOptions;
  clientOptions.coordinator = cluster->coordinatorEndpoint();
  clientOptions.requestTimeout = 600s;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> client,
                        client::Client::connect(clientOptions));

  const std::filesystem::path input = scratch.path() / "input.bc";
  const std::filesystem::path builds = scratch.path() / "builds";
  std::filesystem::create_directories(builds);
  std::vector<std::string> differing;  // notes that come after the general ones
  Report report;
  report.title =
      "kiln bench mlgo --baseline: what an agent answering DefaultAdvice is judged "
      "against (.text bytes)";
  for (const ModuleSet& set : sets) {
    std::vector<Comparison> inliner, regalloc;
    std::vector<JobComparison> jobs;
    for (const std::string& uri : set.uris) {
      KILN_ASSIGN_OR_RETURN(datasets::BenchmarkBytes module, registry.resolve(uri));
      std::ofstream(input, std::ios::binary | std::ios::trunc) << module.bytes;
      KILN_ASSIGN_OR_RETURN(std::vector<std::string> command,
                            registry.moduleFlags(uri, module.bytes));
      mlgo_session::ModuleToolFlags flags = mlgo_session::mapModuleFlags(command);
      for (AdvisorKind kind : {AdvisorKind::kInliner, AdvisorKind::kRegallocEviction}) {
        Comparison figures;
        figures.uri = uri;
        Status played = playDefaultAgent(*client, kind, uri, figures);
        if (played.ok()) played = buildHere(kind, input, flags, builds, figures);
        if (!played.ok()) {
          return Status(played.code(),
                        fmt::format("{} on {}: {}", typeName(kind), uri, played.message()));
        }
        (kind == AdvisorKind::kInliner ? inliner : regalloc).push_back(std::move(figures));
      }
      JobComparison job;
      KILN_ASSIGN_OR_RETURN(job.inlineDefault, runJob(*client, uri, kInlineDefaultJob));
      KILN_ASSIGN_OR_RETURN(job.llvmPipeline, runJob(*client, uri, kLlvmPipelineJob));
      jobs.push_back(job);
    }
    report.rows.push_back(kindRow(set.name, AdvisorKind::kInliner, inliner));
    report.rows.push_back(kindRow(set.name, AdvisorKind::kRegallocEviction, regalloc));
    report.rows.push_back(jobRow(set.name, inliner, jobs));
    for (auto [kind, figures] : {std::pair{AdvisorKind::kInliner, &inliner},
                                 std::pair{AdvisorKind::kRegallocEviction, &regalloc}}) {
      std::string listed = differences(set.name, kind, *figures);
      if (!listed.empty()) differing.push_back(std::move(listed));
    }
  }
  report.notes.push_back(
      "agent: a session answering DefaultAdvice at every decision through a worker of a cluster "
      "in this process; every figure is the .text bytes of the build (bitcode compiled in "
      "process at llc -O2, objects as llc wrote them)");
  report.notes.push_back(
      "before_*: against LLVM's default build without the module's own flags, the baseline "
      "until issue 42 (opt-19 -passes=scc-oz-module-inliner -enable-ml-inliner=default; llc-19 "
      "-regalloc-enable-advisor=default -filetype=obj). *_mean_reward_pct: the mean over modules "
      "of (baseline - agent) / baseline, what the default agent was credited; *_max_abs_bytes: "
      "the largest |baseline - agent|");
  report.notes.push_back(
      "after_*: against the session's own DefaultNativeSize (the reference build: every decision "
      "answered with DefaultAdvice); after_nonzero_rewards counts Reward:NativeSizeSaved != 0");
  report.notes.push_back(
      "llvm_*: LLVM's default build with the module's flags (LlvmDefaultNativeSize) against the "
      "reference build, both made in this process: output bytes identical (bitcode / object), "
      "sizes equal, mean and largest difference. The ML advisors decide some cases without "
      "asking (see docs/mlgo.md); builds_here_match_worker: both sizes built here equal what "
      "the worker observed");
  report.notes.push_back(
      "mlgo-compile: inline_default_equal: a job {inline-default, native-size} measures "
      "mlgo-inline's DefaultNativeSize; llvm_pipeline_equal: {compile "
      "-passes=scc-oz-module-inliner, native-size} measures its LlvmDefaultNativeSize");
  report.notes.insert(report.notes.end(), differing.begin(), differing.end());
  return report;
}

Status baselineVerdict(const Report& report) {
  std::vector<std::string> broken;
  for (const Row& row : report.rows) {
    auto number = [&](const std::string& name) -> std::optional<double> {
      for (const auto& [key, value] : row.numbers) {
        if (key == name) return value;
      }
      return std::nullopt;
    };
    auto modules = number("modules");
    auto same = [&](const char* column) {
      auto value = number(column);
      return !value || value == modules;
    };
    bool ok = same("after_equal") && same("builds_here_match_worker") &&
              same("inline_default_equal") && same("llvm_pipeline_equal") &&
              number("after_nonzero_rewards").value_or(0) == 0;
    if (!ok) broken.push_back(row.text.at(0).second + " " + row.text.at(1).second);
  }
  if (broken.empty()) return okStatus();
  return internalError(
      fmt::format("an agent answering DefaultAdvice was not judged against its own build in: {}",
                  fmt::join(broken, ", ")));
}

}  // namespace kiln::bench
