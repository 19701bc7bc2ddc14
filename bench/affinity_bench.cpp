#include "bench/affinity_bench.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <kiln/client/client.h>
#include "bench/kiln_executable.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

struct ModeFigures {
  std::vector<std::int64_t> hits, misses, all;  // start latencies, ns
  double seconds = 0;
};

// The benchmark of every start, the same for both modes.
std::vector<std::string> drawStarts(const AffinityBenchOptions& o) {
  std::mt19937 random(o.seed);
  std::vector<std::string> uris;
  for (unsigned i = 0; i < o.starts; ++i) {
    uris.push_back(fmt::format("{}{}", o.prefix, 1 + random() % o.benchmarks));
  }
  return uris;
}

Result<ModeFigures> runMode(double slack, const AffinityBenchOptions& o,
                            const std::vector<std::string>& uris) {
  KILN_ASSIGN_OR_RETURN(auto cluster, testsupport::ChildCluster::create(kilnExecutable()));
  KILN_ASSIGN_OR_RETURN(
      testsupport::ChildProcess * coordinator,
      cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn",
                     "--cache-affinity-slack", fmt::format("{}", slack)}));
  for (unsigned w = 0; w < o.workers; ++w) {
    KILN_RETURN_IF_ERROR(
        cluster.spawn(testsupport::benchWorkerArgs(coordinator->endpoint, 1)).status());
  }
  client::ClientOptions options;
  options.coordinator = coordinator->endpoint;
  options.requestTimeout = 120s;
  KILN_ASSIGN_OR_RETURN(auto probe, client::Client::connect(options));
  KILN_RETURN_IF_ERROR(testsupport::waitForWorkers(*probe, o.workers, 30s));

  ModeFigures figures;
  std::mutex mutex;
  std::set<std::pair<std::string, std::string>> warm;  // (benchmark, worker) started before
  std::atomic<std::size_t> next{0};
  Status failure;
  const auto start = Steady::now();
  {
    std::vector<std::jthread> clients;
    for (unsigned c = 0; c < o.clients; ++c) {
      clients.emplace_back([&] {
        auto client = client::Client::connect(options);
        if (!client.ok()) {
          std::lock_guard lock(mutex);
          failure = client.status();
          return;
        }
        for (std::size_t i = next++; i < uris.size(); i = next++) {
          const auto began = Steady::now();
          auto session = (*client)->startSession(client::SessionOptions{"llvm", uris[i]});
          const auto nanos =
              std::chrono::duration_cast<std::chrono::nanoseconds>(Steady::now() - began).count();
          std::lock_guard lock(mutex);
          if (!session.ok()) {
            failure = session.status();
            return;
          }
          // The worker's benchmark cache holds every benchmark it started
          // (it is far larger than this dataset): a start is a hit if its
          // worker started the same benchmark before.
          const bool hit = !warm.emplace(uris[i], (*session)->endpoint()).second;
          (hit ? figures.hits : figures.misses).push_back(nanos);
          figures.all.push_back(nanos);
          (void)(*session)->end();
        }
      });
    }
  }
  figures.seconds = std::chrono::duration<double>(Steady::now() - start).count();
  if (!failure.ok()) return failure;
  return figures;
}

Row rowOf(const std::string& mode, const std::string& judgedAgainst, ModeFigures& f) {
  Row row;
  row.text = {{"mode", mode}, {"judged against", judgedAgainst}};
  const double starts = static_cast<double>(f.all.size());
  const double hits = static_cast<double>(f.hits.size());
  const double seconds = f.seconds;
  LatencySummary all = summarize(f.all), hit = summarize(f.hits), miss = summarize(f.misses);
  row.numbers = {{"starts", starts},
                 {"hit_rate", starts > 0 ? hits / starts : 0},
                 {"start_p50_ms", all.p50us / 1e3},
                 {"start_p99_ms", all.p99us / 1e3},
                 {"start_mean_ms", all.meanUs / 1e3},
                 {"hit_p50_ms", hit.p50us / 1e3},
                 {"miss_p50_ms", miss.p50us / 1e3},
                 {"starts_per_s", starts / seconds}};
  return row;
}

}  // namespace

Result<Report> runAffinityBench(const AffinityBenchOptions& o) {
  if (o.workers == 0 || o.benchmarks == 0 || o.starts == 0 || o.clients == 0 || o.slack <= 0) {
    return invalidArgument("affinity bench: workers, benchmarks, starts, clients and slack > 0");
  }
  const std::vector<std::string> uris = drawStarts(o);
  KILN_ASSIGN_OR_RETURN(ModeFigures byLoad, runMode(0, o, uris));
  KILN_ASSIGN_OR_RETURN(ModeFigures near, runMode(o.slack, o, uris));
  Report report;
  report.title = fmt::format(
      "kiln bench affinity: {} llvm starts on {} benchmarks ({}1..{}, drawn at random, the same "
      "draw in both modes), {} workers of 1 slot, {} clients; a fresh cluster per mode",
      o.starts, o.benchmarks, o.prefix, o.benchmarks, o.workers, o.clients);
  report.rows.push_back(rowOf("by load alone (--cache-affinity-slack 0)",
                              "the baseline: the same draw on a fresh cluster", byLoad));
  report.rows.push_back(rowOf(fmt::format("cache affinity (--cache-affinity-slack {})", o.slack),
                              "by load alone", near));
  report.notes = {
      "hit: the start's worker had started the same benchmark before (its benchmark and "
      "parsed-module caches hold it); miss: the worker generates, reads and parses it first",
  };
  return report;
}

}  // namespace kiln::bench
