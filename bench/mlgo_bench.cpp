// Only the stepping loops are timed: compiler start-up and the end-of-episode
// measurement are the same work on both paths and would hide the per-decision cost.
#include "bench/mlgo_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "common/working_directory.h"
#include "datasets/registry.h"
#include "local/local_cluster.h"
#include "mlgo/interactive_compiler.h"

namespace kiln::bench {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Episode {
  std::int64_t decisions = 0;
  double seconds = 0;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

Result<Episode> directEpisode(const std::filesystem::path& directory,
                              const std::filesystem::path& input) {
  mlgo::CompilerOptions options;
  options.sessionDirectory = directory;
  options.input = input;
  KILN_ASSIGN_OR_RETURN(mlgo::InteractiveCompiler compiler,
                        mlgo::InteractiveCompiler::start(options, Clock::now() + 60s));
  Episode episode;
  auto start = Clock::now();
  auto deadline = start + 120s;
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::optional<mlgo::Observation> observation, compiler.next(deadline));
    if (!observation) break;
    KILN_ASSIGN_OR_RETURN(std::int64_t advice, compiler.defaultAdvice(*observation));
    KILN_RETURN_IF_ERROR(compiler.advise(Value(advice), deadline));
    ++episode.decisions;
  }
  episode.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  KILN_ASSIGN_OR_RETURN(mlgo::CompileOutcome outcome, compiler.finish(deadline));
  std::error_code ignored;
  std::filesystem::remove(outcome.output, ignored);
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
    KILN_ASSIGN_OR_RETURN(client::StepResult stepped, session->step({Value(advice)}, observe));
    ++episode.decisions;
    if (stepped.endOfEpisode) break;
    advice = stepped.observations.front().as<std::int64_t>();
  }
  episode.seconds = std::chrono::duration<double>(Clock::now() - start).count();
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

}  // namespace

Result<Report> runMlgoBench(const MlgoBenchOptions& options) {
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch, WorkingDirectory::create({}, "kiln-mlgo-bench"));
  KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry registry, datasets::DatasetRegistry::create({}));
  LocalClusterOptions local;
  local.worker.slots = options.slots;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<LocalCluster> cluster, LocalCluster::start(local));
  KILN_RETURN_IF_ERROR(cluster->waitUntilReady(10s));
  client::ClientOptions clientOptions;
  clientOptions.coordinator = cluster->coordinatorEndpoint();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<client::Client> client,
                        client::Client::connect(clientOptions));

  Report report;
  report.title = "kiln bench mlgo: mlgo-inline decisions through kiln vs the direct pipe loop";
  for (const std::string& uri : options.programs) {
    KILN_ASSIGN_OR_RETURN(datasets::BenchmarkBytes bytes, registry.resolve(uri));
    std::filesystem::path input = scratch.path() / "input.bc";
    std::ofstream(input, std::ios::binary) << bytes.bytes;
    std::vector<double> directUs, kilnUs;
    std::int64_t decisions = 0;
    for (unsigned r = 0; r < std::max(1U, options.repetitions); ++r) {
      KILN_ASSIGN_OR_RETURN(Episode direct, directEpisode(scratch.path(), input));
      KILN_ASSIGN_OR_RETURN(Episode viaKiln, kilnEpisode(*client, uri));
      if (direct.decisions == 0 || direct.decisions != viaKiln.decisions) {
        return internalError(fmt::format("{}: {} decisions direct, {} through kiln", uri,
                                         direct.decisions, viaKiln.decisions));
      }
      decisions = direct.decisions;
      directUs.push_back(direct.seconds * 1e6 / direct.decisions);
      kilnUs.push_back(viaKiln.seconds * 1e6 / viaKiln.decisions);
    }
    Row row;
    row.text = {{"program", uri}};
    double directMedian = median(directUs), kilnMedian = median(kilnUs);
    row.numbers = {
        {"decisions", static_cast<double>(decisions)},
        {"direct_us_per_decision_min", *std::min_element(directUs.begin(), directUs.end())},
        {"direct_us_per_decision_median", directMedian},
        {"kiln_us_per_decision_min", *std::min_element(kilnUs.begin(), kilnUs.end())},
        {"kiln_us_per_decision_median", kilnMedian},
        {"direct_decisions_per_s", 1e6 / directMedian},
        {"kiln_decisions_per_s", 1e6 / kilnMedian},
        {"kiln_added_us_per_decision", kilnMedian - directMedian}};
    report.rows.push_back(std::move(row));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> suite,
                        registry.benchmarkUris("benchmark://kiln-bench-v0"));
  KILN_ASSIGN_OR_RETURN(double modulesPerSecond,
                        batchModulesPerSecond(*client, suite, options.jobs, options.slots));
  Row batch;
  batch.text = {
      {"program", fmt::format("{} -Oz mlgo-compile jobs over kiln-bench-v0", options.jobs)}};
  batch.numbers = {{"modules_per_s", modulesPerSecond},
                   {"slots_in_flight", static_cast<double>(options.slots)}};
  report.rows.push_back(std::move(batch));
  report.notes.push_back(fmt::format(
      "{} episodes per program and path; per-decision figures time only the stepping loop; "
      "target: kiln adds <= 50 us per decision",
      options.repetitions));
  return report;
}

}  // namespace kiln::bench
