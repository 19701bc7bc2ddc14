#include "bench/datasets_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include <kiln/client/client.h>
#include <kiln/client/datasets.h>
#include "bench/kiln_executable.h"
#include "common/process/working_directory.h"
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/registry.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr double kIndexTargetMs = 1000;   // issue #21: start-up, index not load
constexpr double kListingTargetMs = 100;  // issue #21: listing all of it
constexpr double kMiB = 1024.0 * 1024.0;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Spread {
  double min = 0, p50 = 0, max = 0;
};

Spread spread(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  return {samples.front(), samples[samples.size() / 2], samples.back()};
}

// The modules the corpora are made of: kiln-bench-v0's bitcode and csmith
// programs built now (a seed that fails to build is noted and skipped).
Result<std::vector<fs::path>> writeSources(const DatasetsBenchOptions& o, const fs::path& scratch,
                                           Report& report) {
  fs::create_directories(scratch / "sources");
  std::vector<fs::path> sources;
  auto write = [&](const std::string& bytes) -> Status {
    fs::path path = scratch / "sources" / fmt::format("{}.bc", sources.size());
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return internalError("cannot write " + path.string());
    sources.push_back(path);
    return okStatus();
  };
  for (const auto& program : bundled::kilnBenchV0()) {
    KILN_RETURN_IF_ERROR(write(std::string(reinterpret_cast<const char*>(program.bitcode.data()),
                                           program.bitcode.size())));
  }
  datasets::DatasetConfig config;
  config.scratchDirectory = scratch;
  KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry generators,
                        datasets::DatasetRegistry::create(std::move(config)));
  unsigned built = 0;
  for (unsigned seed = 1; seed <= o.csmithSeeds; ++seed) {
    auto program = generators.resolve(fmt::format("generator://csmith-v0/{}", seed));
    if (!program.ok()) {
      report.notes.push_back(
          fmt::format("csmith seed {} skipped: {}", seed, program.status().message()));
      continue;
    }
    KILN_RETURN_IF_ERROR(write(program->bytes));
    ++built;
  }
  report.notes.push_back(fmt::format(
      "sources: kiln-bench-v0's {} modules and {} csmith programs, linked {} times over",
      bundled::kilnBenchV0().size(), built, o.modules / std::max<std::size_t>(sources.size(), 1)));
  return sources;
}

// A hard link where the file system allows it (no disk per module), else a copy.
Status place(const fs::path& source, const fs::path& target) {
  std::error_code error;
  fs::create_hard_link(source, target, error);
  if (error) fs::copy_file(source, target, fs::copy_options::overwrite_existing, error);
  if (error) return internalError("cannot make " + target.string() + ": " + error.message());
  return okStatus();
}

std::string moduleName(unsigned i) { return fmt::format("d{:03}/m{:05}", i / 100, i); }

// The same N modules as a plain directory of .bc files and in MLGO's layout
// (corpus_description.json, .bc and .cmd per module, half -O2 and half -Oz).
Status makeCorpora(const DatasetsBenchOptions& o, const std::vector<fs::path>& sources,
                   const fs::path& plain, const fs::path& mlgo) {
  std::string description = R"({"has_thinlto": false, "modules": [)";
  for (unsigned i = 0; i < o.modules; ++i) {
    const std::string name = moduleName(i);
    const fs::path& source = sources[i % sources.size()];
    fs::create_directories((plain / name).parent_path());
    fs::create_directories((mlgo / name).parent_path());
    KILN_RETURN_IF_ERROR(place(source, plain / (name + ".bc")));
    KILN_RETURN_IF_ERROR(place(source, mlgo / (name + ".bc")));
    std::ofstream cmd(mlgo / (name + ".cmd"), std::ios::binary);
    const std::string flags = std::string(i % 2 == 0 ? "-O2" : "-Oz") + '\0' +
                              "--target=x86_64-pc-linux-gnu" + '\0' + "-fPIC";
    cmd.write(flags.data(), static_cast<std::streamsize>(flags.size()));
    description += fmt::format("{}\"{}\"", i == 0 ? "" : ",", name);
  }
  description += "]}";
  std::ofstream(mlgo / "corpus_description.json") << description;
  return okStatus();
}

Row row(std::string layout, std::string operation, std::string judgedAgainst) {
  Row r;
  r.text = {{"layout", std::move(layout)},
            {"operation", std::move(operation)},
            {"judged_against", std::move(judgedAgainst)}};
  return r;
}

// The scan alone, in this process: what a worker's contexts pay at start.
Status measureIndex(const DatasetsBenchOptions& o, const std::string& layout, const fs::path& root,
                    Report& report) {
  std::vector<double> samples;
  std::size_t size = 0;
  std::uint64_t bytes = 0;
  for (unsigned r = 0; r < o.repetitions; ++r) {
    datasets::DatasetConfig config;
    config.corpora = {{layout, root}};
    auto start = Clock::now();
    KILN_ASSIGN_OR_RETURN(datasets::DatasetRegistry registry,
                          datasets::DatasetRegistry::create(std::move(config)));
    samples.push_back(msSince(start));
    size = static_cast<std::size_t>(registry.list().back().size.value_or(0));
    bytes = registry.list().back().bytes;
  }
  if (size != o.modules) {
    return internalError(
        fmt::format("the {} corpus indexed {} of {} modules", layout, size, o.modules));
  }
  Spread s = spread(samples);
  Row r = row(layout, "index the corpus (scan, in process)", "target < 1000 ms (index, not load)");
  r.numbers = {{"modules", double(size)},
               {"bytes", double(bytes)},
               {"min_ms", s.min},
               {"p50_ms", s.p50},
               {"target_ms", kIndexTargetMs},
               {"samples", double(samples.size())}};
  report.rows.push_back(std::move(r));
  return okStatus();
}

// A standalone worker process from spawn to serving, without and with both
// corpora: the difference is what the corpora add to its start-up. Its RSS
// once serving shows what the index holds.
Status measureStartUp(const DatasetsBenchOptions& o, testsupport::ChildCluster& cluster,
                      const std::vector<std::string>& datasetFlags, Report& report) {
  std::vector<double> bare, served;
  std::vector<double> bareRss, servedRss;
  for (unsigned r = 0; r < o.repetitions; ++r) {
    for (bool withCorpora : {false, true}) {
      std::vector<std::string> args = {"worker", "--listen", "tcp://127.0.0.1:0", "--log-level",
                                       "warn"};
      if (withCorpora) args.insert(args.end(), datasetFlags.begin(), datasetFlags.end());
      auto start = Clock::now();
      KILN_ASSIGN_OR_RETURN(testsupport::ChildProcess * worker, cluster.spawn(args));
      (withCorpora ? served : bare).push_back(msSince(start));
      (withCorpora ? servedRss : bareRss)
          .push_back(double(residentBytes(worker->process.pid())) / kMiB);
      cluster.retire(worker);
    }
  }
  Spread b = spread(bare), s = spread(served);
  Row r = row("both", "worker start-up: spawn to serving, with both corpora",
              "the same worker without corpora; added p50 vs target < 1000 ms");
  r.numbers = {{"modules", double(2 * o.modules)},
               {"p50_ms", s.p50},
               {"min_ms", s.min},
               {"no_corpus_p50_ms", b.p50},
               {"added_p50_ms", s.p50 - b.p50},
               {"target_ms", kIndexTargetMs},
               {"rss_mib", spread(servedRss).p50},
               {"no_corpus_rss_mib", spread(bareRss).p50},
               {"samples", double(served.size())}};
  report.rows.push_back(std::move(r));
  return okStatus();
}

Status measureListing(const DatasetsBenchOptions& o, client::Client& client,
                      const std::string& worker, const std::string& layout, Report& report) {
  const std::string dataset = "benchmark://" + layout;
  std::vector<double> uris, sizes;
  for (unsigned r = 0; r < o.repetitions; ++r) {
    auto start = Clock::now();
    KILN_ASSIGN_OR_RETURN(
        auto listed,
        client::listBenchmarks(client, dataset, std::numeric_limits<std::size_t>::max(), worker));
    uris.push_back(msSince(start));
    if (listed.size() != o.modules) {
      return internalError(
          fmt::format("{} listed {} of {} modules", dataset, listed.size(), o.modules));
    }
    start = Clock::now();
    KILN_ASSIGN_OR_RETURN(auto withSizes,
                          client::listBenchmarkSizes(
                              client, dataset, std::numeric_limits<std::size_t>::max(), worker));
    sizes.push_back(msSince(start));
  }
  for (const auto& [operation, samples] :
       {std::pair<std::string, std::vector<double>&>{"list every URI (client, over the wire)",
                                                     uris},
        {"list every URI with its bytes (over the wire)", sizes}}) {
    Spread s = spread(samples);
    Row r = row(layout, operation, "target < 100 ms");
    r.numbers = {{"modules", double(o.modules)},
                 {"min_ms", s.min},
                 {"p50_ms", s.p50},
                 {"target_ms", kListingTargetMs},
                 {"samples", double(samples.size())}};
    report.rows.push_back(std::move(r));
  }
  return okStatus();
}

Result<std::uint64_t> cacheBound(client::Client& client, const std::string& worker,
                                 const std::string& prefix) {
  KILN_ASSIGN_OR_RETURN(std::string reply,
                        client.workerParameter(worker, prefix + "get_max_size_in_bytes", ""));
  try {
    return std::stoull(reply);
  } catch (const std::exception&) {
    return internalError(fmt::format("{}get_max_size_in_bytes answered '{}'", prefix, reply));
  }
}

Result<double> timedStart(client::Client& client, const std::string& uri) {
  client::SessionOptions options;
  options.sessionType = "llvm";
  options.benchmark = uri;
  auto start = Clock::now();
  KILN_ASSIGN_OR_RETURN(auto session, client.startSession(options));
  const double us = msSince(start) * 1000;
  KILN_RETURN_IF_ERROR(session->end());
  return us;
}

// llvm sessions on `touched` different modules, each started once (cold:
// never read by this worker), with the worker's RSS sampled on the way
// against its caches' bounds; then starts on modules still cached.
Status measureTouching(const DatasetsBenchOptions& o, client::Client& client,
                       const std::string& worker, int workerPid, Report& report) {
  std::uint64_t bound = 0;
  std::string bounds;
  for (const char* prefix : {"service.benchmark_cache.", "service.parsed_module_cache.",
                             "service.transition_cache.", "service.ready_modules."}) {
    KILN_ASSIGN_OR_RETURN(std::uint64_t bytes, cacheBound(client, worker, prefix));
    bound += bytes;
    bounds += fmt::format("{}{} {:.0f} MiB", bounds.empty() ? "" : ", ", prefix, bytes / kMiB);
  }
  report.notes.push_back("cache bounds of the worker: " + bounds);
  const double idle = double(residentBytes(workerPid)) / kMiB;
  const unsigned touched = std::min(o.touched, o.modules);
  std::vector<double> cold;
  for (unsigned i = 0; i < touched; ++i) {
    KILN_ASSIGN_OR_RETURN(double us, timedStart(client, "benchmark://plain/" + moduleName(i)));
    cold.push_back(us);
    const bool checkpoint = (i + 1) % std::max(1u, touched / 4) == 0 || i + 1 == touched;
    if (!checkpoint) continue;
    const double rss = double(residentBytes(workerPid)) / kMiB;
    Row r =
        row("plain", fmt::format("worker RSS after llvm sessions on {} different modules", i + 1),
            "RSS before + the caches' byte bounds");
    r.numbers = {{"modules_touched", double(i + 1)},
                 {"rss_mib", rss},
                 {"rss_before_mib", idle},
                 {"growth_mib", rss - idle},
                 {"caches_bound_mib", bound / kMiB},
                 {"within_bound", rss <= idle + bound / kMiB ? 1.0 : 0.0}};
    report.rows.push_back(std::move(r));
  }
  // The last modules started are still in the parsed-module cache (256 entries).
  std::vector<double> cached;
  const unsigned again = std::min({o.cachedStarts, touched, 200u});
  for (unsigned i = touched - again; i < touched; ++i) {
    KILN_ASSIGN_OR_RETURN(double us, timedStart(client, "benchmark://plain/" + moduleName(i)));
    cached.push_back(us);
  }
  Spread c = spread(cold), h = spread(cached);
  Row coldRow = row("plain", "start an llvm session on a module never read (cold)",
                    "the same start on a cached module (below)");
  coldRow.numbers = {{"min_us", c.min},
                     {"p50_us", c.p50},
                     {"max_us", c.max},
                     {"x_cached_p50", c.p50 / std::max(h.p50, 1e-3)},
                     {"samples", double(cold.size())}};
  report.rows.push_back(std::move(coldRow));
  Row cachedRow = row("plain", "start an llvm session on a cached module", "-");
  cachedRow.numbers = {
      {"min_us", h.min}, {"p50_us", h.p50}, {"max_us", h.max}, {"samples", double(cached.size())}};
  report.rows.push_back(std::move(cachedRow));
  return okStatus();
}

}  // namespace

Result<Report> runDatasetsBench(const DatasetsBenchOptions& o) {
  if (o.modules == 0 || o.repetitions == 0) {
    return invalidArgument("kiln bench datasets needs at least one module and one repetition");
  }
  Report report;
  report.title = fmt::format(
      "an operator's corpus of {} modules (plain directory and MLGO layout) served by a real "
      "worker process",
      o.modules);
  KILN_ASSIGN_OR_RETURN(WorkingDirectory scratch,
                        WorkingDirectory::create({}, "kiln-bench-datasets"));
  auto made = Clock::now();
  KILN_ASSIGN_OR_RETURN(std::vector<fs::path> sources, writeSources(o, scratch.path(), report));
  const fs::path plain = scratch.path() / "plain";
  const fs::path mlgo = scratch.path() / "mlgo";
  KILN_RETURN_IF_ERROR(makeCorpora(o, sources, plain, mlgo));
  report.notes.push_back(fmt::format(
      "corpora made in {:.1f} s (hard links where the file system allows); their directory "
      "entries are in the page cache, as on a worker that read them before",
      msSince(made) / 1000));

  KILN_RETURN_IF_ERROR(measureIndex(o, "plain", plain, report));
  KILN_RETURN_IF_ERROR(measureIndex(o, "mlgo", mlgo, report));

  KILN_ASSIGN_OR_RETURN(testsupport::ChildCluster cluster,
                        testsupport::ChildCluster::create(kilnExecutable()));
  const std::vector<std::string> datasetFlags = {"--dataset", "plain=" + plain.string(),
                                                 "--dataset", "mlgo=" + mlgo.string()};
  KILN_RETURN_IF_ERROR(measureStartUp(o, cluster, datasetFlags, report));

  KILN_ASSIGN_OR_RETURN(testsupport::CoordinatorAndWorker servers,
                        testsupport::spawnCoordinatorAndWorker(cluster, 2, datasetFlags));
  client::ClientOptions options;
  options.coordinator = servers.coordinator->endpoint;
  options.requestTimeout = std::chrono::seconds(60);
  KILN_ASSIGN_OR_RETURN(auto client, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*client, 1, std::chrono::seconds(30)));
  KILN_ASSIGN_OR_RETURN(auto workers, client->listCluster());
  const std::string worker = workers.at(0).endpoint;
  KILN_RETURN_IF_ERROR(measureListing(o, *client, worker, "plain", report));
  KILN_RETURN_IF_ERROR(measureListing(o, *client, worker, "mlgo", report));
  KILN_RETURN_IF_ERROR(measureTouching(o, *client, worker, servers.worker->process.pid(), report));
  report.notes.push_back(
      "processes: this bench process (client), a coordinator and a worker as child processes; "
      "the start-up rows spawn standalone workers");
  return report;
}

}  // namespace kiln::bench
