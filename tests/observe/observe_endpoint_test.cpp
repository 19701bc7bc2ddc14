// The metrics endpoints of a running local cluster, scraped over loopback:
// names present, counters moving when sessions step, errors counted by kind,
// the dashboard routes served, and hostile HTTP answered without harm.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "tests/observe/http_probe.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using observe_test::get;
using observe_test::sampleValue;

LocalClusterOptions observedCluster() {
  LocalClusterOptions options;
  options.workers = 1;
  options.nestingHosts = 1;
  options.worker.slots = 2;
  options.log.level = spdlog::level::off;
  options.coordinator.heartbeatInterval = 100ms;
  options.worker.link.heartbeatInterval = 100ms;
  options.coordinator.metricsListen = "127.0.0.1:0";
  options.worker.metricsListen = "127.0.0.1:0";
  return options;
}

std::unique_ptr<client::Client> connect(const std::string& coordinator) {
  client::ClientOptions options;
  options.coordinator = coordinator;
  options.requestTimeout = 5s;
  return std::move(client::Client::connect(options).value());
}

// Scrapes until `ready` holds for the exposition or 5 s pass (the servers
// refresh their metrics every 250 ms).
std::string scrapeUntil(int port, const std::function<bool(const std::string&)>& ready) {
  std::string text;
  for (int attempt = 0; attempt < 100; ++attempt) {
    text = get(port, "/metrics").body;
    if (ready(text)) break;
    std::this_thread::sleep_for(50ms);
  }
  return text;
}

double sumOf(const std::string& exposition, const std::string& prefix) {
  double sum = 0;
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

struct ObservedCluster : ::testing::Test {
  void SetUp() override {
    auto started = LocalCluster::start(observedCluster());
    ASSERT_TRUE(started.ok()) << started.status().toString();
    cluster = std::move(started).value();
    ASSERT_TRUE(cluster->waitUntilReady(10s).ok());
    ports = cluster->workerMetricsPorts();
    ASSERT_EQ(ports.size(), 2u);
    ASSERT_GT(ports[0], 0);
    ASSERT_GT(ports[1], 0);
    ASSERT_NE(ports[0], ports[1]);  // one address for all, each on its own port
    coordinatorPort = cluster->coordinatorMetricsPort();
    ASSERT_GT(coordinatorPort, 0);
  }
  std::unique_ptr<LocalCluster> cluster;
  std::vector<int> ports;
  int coordinatorPort = 0;
};

TEST_F(ObservedCluster, WorkerCountersMoveWhenSessionsStep) {
  auto client = connect(cluster->coordinatorEndpoint());
  const std::string worker = cluster->workerEndpoints()[0];
  std::string before = get(ports[0], "/metrics").body;
  ASSERT_EQ(sampleValue(before, "kiln_slots"), 2) << before;
  double stepsBefore = sampleValue(before, "kiln_steps_total");
  ASSERT_GE(stepsBefore, 0);
  for (const char* name :
       {"kiln_live_sessions", "kiln_steps_per_second", "kiln_utilization", "kiln_busy_slots",
        "kiln_benchmark_cache_hits_total", "kiln_benchmark_cache_misses_total",
        "kiln_benchmark_cache_evictions_total", "kiln_restarts_total",
        "kiln_errors_total{kind=\"timeout\"}"}) {
    EXPECT_GE(sampleValue(before, name), 0) << name << " missing in\n" << before;
  }

  auto session = client->startSessionOn(worker, {"noop", "benchmark://noop/x"});
  ASSERT_TRUE(session.ok()) << session.status().toString();
  constexpr int kSteps = 50;
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"}).ok());
  }
  std::string after = scrapeUntil(ports[0], [&](const std::string& text) {
    return sampleValue(text, "kiln_steps_total") >= stepsBefore + kSteps &&
           sampleValue(text, "kiln_live_sessions") == 1;
  });
  EXPECT_GE(sampleValue(after, "kiln_steps_total"), stepsBefore + kSteps) << after;
  EXPECT_EQ(sampleValue(after, "kiln_live_sessions"), 1) << after;
  EXPECT_GE(sampleValue(after, "kiln_step_seconds_count{session_type=\"noop\"}"), kSteps) << after;
  EXPECT_EQ(sampleValue(after, "kiln_queue_depth{experiment=\"\"}"), 0) << after;
  // The nesting host served none of these steps.
  EXPECT_EQ(sampleValue(get(ports[1], "/metrics").body, "kiln_steps_total"), 0);

  // An error reply is counted under its kind.
  double errorsBefore = sumOf(after, "kiln_errors_total{");
  auto refused = client->workerParameter(worker, "no.such.parameter", "1");
  ASSERT_FALSE(refused.ok());
  std::string kind(errorCodeName(refused.status().code()));
  std::replace(kind.begin(), kind.end(), ' ', '_');
  std::string errors = scrapeUntil(ports[0], [&](const std::string& text) {
    return sumOf(text, "kiln_errors_total{") > errorsBefore;
  });
  EXPECT_EQ(sumOf(errors, "kiln_errors_total{"), errorsBefore + 1) << errors;
  EXPECT_GE(sampleValue(errors, "kiln_errors_total{kind=\"" + kind + "\"}"), 1) << errors;
}

TEST_F(ObservedCluster, CoordinatorCountsWorkersHostsAndPlacements) {
  std::string text = scrapeUntil(coordinatorPort, [](const std::string& t) {
    return sampleValue(t, "kiln_coordinator_workers") == 1 &&
           sampleValue(t, "kiln_coordinator_hosts") == 1;
  });
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_workers"), 1) << text;
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_hosts"), 1) << text;
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_experiments"), 0) << text;
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_slots"), 4) << text;
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_workers_lost_total"), 0) << text;
  double placed = sampleValue(text, "kiln_coordinator_placements_total");
  auto client = connect(cluster->coordinatorEndpoint());
  auto listed = client->listCluster();
  ASSERT_TRUE(listed.ok()) << listed.status().toString();
  // Ids start at random for each coordinator run: the ones it gave.
  bool labelled = false;
  for (const auto& worker : *listed) {
    labelled |= text.find(fmt::format("kiln_coordinator_host_utilization{{worker=\"{}\"",
                                      worker.workerId)) != std::string::npos;
  }
  EXPECT_TRUE(labelled) << text;

  auto first = client->startSession({"noop", "benchmark://noop/x"});
  auto second = client->startSession({"noop", "benchmark://noop/y"});
  ASSERT_TRUE(first.ok() && second.ok());
  text = scrapeUntil(coordinatorPort, [&](const std::string& t) {
    return sampleValue(t, "kiln_coordinator_placements_total") >= placed + 2;
  });
  EXPECT_EQ(sampleValue(text, "kiln_coordinator_placements_total"), placed + 2) << text;
}

TEST_F(ObservedCluster, DashboardRoutesServeThePageAndTheStatus) {
  for (const char* path : {"/", "/dashboard"}) {
    auto page = get(coordinatorPort, path);
    EXPECT_EQ(page.status, 200) << path;
    EXPECT_NE(page.raw.find("text/html"), std::string::npos);
    EXPECT_NE(page.body.find("id=\"total-hosts\""), std::string::npos);
    EXPECT_EQ(page.body.find("http://"), page.body.find("http://www.w3.org/2000/svg"))
        << "the page must load nothing from elsewhere";
  }
  std::string status;
  for (int attempt = 0; attempt < 100; ++attempt) {
    status = get(coordinatorPort, "/api/status").body;
    if (status.find("\"hosts\": 2,") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(status.find("\"totals\": {\"hosts\": 2, \"experiments\": 0, \"slots\": 4"),
            std::string::npos)
      << status;
  // Workers serve metrics only: no dashboard there.
  EXPECT_EQ(get(ports[0], "/api/status").status, 404);
}

TEST_F(ObservedCluster, HostileHttpIsAnsweredAndBreaksNothing) {
  for (int port : {coordinatorPort, ports[0]}) {
    auto garbage = observe_test::exchange(port, std::string("\x00\xff\x13garbage\r\n\r\n", 15));
    EXPECT_TRUE(garbage.status == 0 || garbage.status >= 400) << garbage.raw;
    EXPECT_EQ(get(port, "/no/such/page").status, 404);
    auto post = observe_test::exchange(
        port,
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\n"
        "abc");
    EXPECT_EQ(post.status, 405) << post.raw;
    std::string longPath = "/" + std::string(100000, 'a');
    auto huge = get(port, longPath);
    EXPECT_TRUE(huge.status == 0 || huge.status >= 400);
    // A client that connects and says nothing must not hold the server up.
    auto silent = std::thread([port] { observe_test::exchange(port, "", 1); });
    auto scraped = get(port, "/metrics");
    EXPECT_EQ(scraped.status, 200);
    EXPECT_NE(scraped.body.find("# TYPE"), std::string::npos);
    silent.join();
  }
  // The cluster still serves sessions.
  auto client = connect(cluster->coordinatorEndpoint());
  EXPECT_TRUE(client->startSession({"noop", "benchmark://noop/x"}).ok());
}

TEST(ObservedServers, BadMetricsAddressStopsTheServerFromStarting) {
  zmq::context_t zmq(1);
  SteadyClock clock;
  CoordinatorConfig coordinator;
  coordinator.listen = "tcp://127.0.0.1:0";
  coordinator.metricsListen = "127.0.0.1:port";
  auto server = CoordinatorServer::create(coordinator, zmq, clock, makeNullLogger("c"));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(server.status().message().find("port"), std::string::npos);

  LocalClusterOptions options;
  options.worker.metricsListen = "nohost";
  options.log.level = spdlog::level::off;
  auto cluster = LocalCluster::start(options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
