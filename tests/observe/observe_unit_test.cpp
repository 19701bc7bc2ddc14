// Unit tests of the observability pieces without a cluster: listen address
// parsing, log fields, worker metrics with a fake clock, the utilization
// timeline and the dashboard JSON, and the endpoints' refusal of bad input.
#include <gtest/gtest.h>

#include "common/metrics/listen_address.h"
#include "common/metrics/log_fields.h"
#include "coordinator/coordinator_metrics.h"
#include "coordinator/dashboard.h"
#include "tests/observe/http_probe.h"
#include "worker/worker_cli.h"
#include "worker/worker_metrics.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using observe_test::sampleValue;

TEST(ListenAddress, AcceptsHostAndPort) {
  auto parsed = metrics::parseListenAddress("127.0.0.1:9100");
  ASSERT_TRUE(parsed.ok()) << parsed.status().toString();
  EXPECT_EQ(parsed->host, "127.0.0.1");
  EXPECT_EQ(parsed->port, 9100);
  auto any = metrics::parseListenAddress("localhost:0");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->port, 0);
}

TEST(ListenAddress, RefusesHostileText) {
  for (const char* bad : {"", "9100", ":9100", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:65536",
                          "127.0.0.1:99999999999999", "127.0.0.1:80x", "127.0.0.1: 80",
                          "bad host:80", "[::1]:80", "a/b:80", "127.0.0.1:0x10"}) {
    auto parsed = metrics::parseListenAddress(bad);
    ASSERT_FALSE(parsed.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("metrics"), std::string::npos);
  }
  std::string longHost(300, 'a');
  EXPECT_FALSE(metrics::parseListenAddress(longHost + ":80").ok());
}

TEST(LogFields, SessionIsHexAndExperimentIsQuotedOnlyWhenNeeded) {
  EXPECT_EQ(logfields::session(0xbeef), "session=beef");
  EXPECT_EQ(logfields::experiment("alpha-1"), "experiment=alpha-1");
  EXPECT_EQ(logfields::experiment(""), "experiment=-");
  EXPECT_EQ(logfields::experiment("a b"), "experiment=\"a b\"");
  EXPECT_EQ(logfields::experiment("x=\"y\"\n"), "experiment=\"x=\\\"y\\\"\\n\"");
  EXPECT_EQ(logfields::experiment(std::string("t\x01", 2)), "experiment=\"t\\x01\"");
  EXPECT_EQ(logfields::sessionAndExperiment(0x10, "e"), "session=10 experiment=e");
}

struct WorkerMetricsFixture : ::testing::Test {
  FakeClock clock;
  metrics::Registry registry;
  std::unique_ptr<WorkerMetrics> metrics = WorkerMetrics::create(registry, clock).value();
};

TEST_F(WorkerMetricsFixture, StepsMoveTheCounterHistogramAndRate) {
  WorkerLoadSample sample;
  sample.slots = 4;
  metrics->update(sample);  // starts the rate window
  metrics->onSteps("noop", 20us, 3);
  metrics->onSteps("noop", 2ms, 2);
  metrics->onSteps("llvm", 1s, 1);
  clock.advance(2s);
  metrics->update(sample);
  std::string text = registry.renderText();
  EXPECT_EQ(sampleValue(text, "kiln_steps_total"), 6);
  EXPECT_DOUBLE_EQ(metrics->stepsPerSecond(), 3.0);  // 6 steps in 2 s
  EXPECT_EQ(sampleValue(text, "kiln_step_seconds_count{session_type=\"noop\"}"), 2);
  EXPECT_EQ(sampleValue(text, "kiln_step_seconds_count{session_type=\"llvm\"}"), 1);
  // Cumulative buckets: below 20 us nothing, from 20 us on the fast step,
  // from 2 ms on both.
  for (const metrics::FamilySnapshot& family : registry.snapshot()) {
    if (family.name != "kiln_step_seconds") continue;
    for (const metrics::SeriesSnapshot& series : family.series) {
      if (series.labelValues != std::vector<std::string>{"noop"}) continue;
      for (std::size_t b = 0; b < family.bounds.size(); ++b) {
        std::uint64_t expected = family.bounds[b] < 20e-6 ? 0 : family.bounds[b] < 2e-3 ? 1 : 2;
        EXPECT_EQ(series.cumulativeCounts[b], expected) << "le=" << family.bounds[b];
      }
      EXPECT_NEAR(series.sum, 20e-6 + 2e-3, 1e-12);
    }
  }
}

TEST_F(WorkerMetricsFixture, GaugesCacheRestartsAndErrorsFollowTheLoad) {
  WorkerLoadSample sample;
  sample.slots = 4;
  sample.load.total = {10, 3, 2, 0};
  UnderlyingStatus a{{1, "alpha", 1, 0, {}}, {6, 2, 2, 0}};
  UnderlyingStatus b{{2, "beta", 1, 0, {}}, {4, 1, 0, 0}};
  sample.load.underlying = {a, b};
  sample.cache = {5, 2, 1, 3};
  sample.registrations = 1;
  metrics->update(sample);
  metrics->onError(ErrorCode::kNotFound);
  metrics->onError(ErrorCode::kNotFound);
  metrics->onError(ErrorCode::kOk);               // not an error: ignored
  metrics->onError(static_cast<ErrorCode>(200));  // out of range: ignored
  std::string text = registry.renderText();
  EXPECT_EQ(sampleValue(text, "kiln_live_sessions"), 10);
  EXPECT_EQ(sampleValue(text, "kiln_utilization"), 0.75);
  EXPECT_EQ(sampleValue(text, "kiln_underlying_workers"), 2);
  EXPECT_EQ(sampleValue(text, "kiln_queue_depth{experiment=\"alpha\"}"), 2);
  EXPECT_EQ(sampleValue(text, "kiln_experiment_busy_slots{experiment=\"beta\"}"), 1);
  EXPECT_EQ(sampleValue(text, "kiln_experiment_sessions{experiment=\"alpha\"}"), 6);
  EXPECT_EQ(sampleValue(text, "kiln_benchmark_cache_hits_total"), 5);
  EXPECT_EQ(sampleValue(text, "kiln_restarts_total"), 0);  // the first registration is no restart
  EXPECT_EQ(sampleValue(text, "kiln_errors_total{kind=\"not_found\"}"), 2);
  EXPECT_EQ(sampleValue(text, "kiln_errors_total{kind=\"internal\"}"), 0);

  // beta leaves, the cache counts on, the link registered twice more.
  sample.load.underlying = {a};
  sample.cache = {9, 2, 4, 3};
  sample.registrations = 3;
  metrics->update(sample);
  text = registry.renderText();
  EXPECT_EQ(sampleValue(text, "kiln_experiment_sessions{experiment=\"beta\"}"), 0);
  EXPECT_EQ(sampleValue(text, "kiln_benchmark_cache_hits_total"), 9);
  EXPECT_EQ(sampleValue(text, "kiln_benchmark_cache_evictions_total"), 4);
  EXPECT_EQ(sampleValue(text, "kiln_restarts_total"), 2);
  // A cache that restarted from zero must not make the counter go down.
  sample.cache = {};
  metrics->update(sample);
  EXPECT_EQ(sampleValue(registry.renderText(), "kiln_benchmark_cache_hits_total"), 9);
}

WorkerRecord nestingHost(std::uint64_t id, std::uint32_t slots,
                         std::vector<UnderlyingStatus> underlying) {
  WorkerRecord host;
  host.snapshot.id = WorkerId{id};
  host.snapshot.slots = slots;
  host.nesting = true;
  host.endpoint = "tcp://127.0.0.1:" + std::to_string(5000 + id);
  host.underlying = std::move(underlying);
  return host;
}

UnderlyingStatus running(std::uint64_t worker, const std::string& experiment, std::uint32_t busy,
                         std::uint32_t sessions = 1) {
  UnderlyingStatus status;
  status.spec.workerId = worker;
  status.spec.experiment = experiment;
  status.load.busySlots = busy;
  status.load.liveSessions = sessions;
  return status;
}

ExperimentSpec spec(const std::string& name, std::uint32_t workers) {
  ExperimentSpec s;
  s.name = name;
  s.workers = workers;
  s.sessionTypes = {"noop"};
  return s;
}

TEST(UtilizationTimeline, SamplesEachExperimentsShareOfEachHost) {
  FakeClock clock;
  ExperimentBook book(clock, makeNullLogger("test"), 1s, 30s);
  ASSERT_TRUE(book.open(spec("alpha", 2)).ok());
  ASSERT_TRUE(book.open(spec("beta", 1)).ok());
  HostTable hosts;
  hosts.emplace(WorkerId{1}, nestingHost(1, 4, {running(11, "alpha", 1), running(12, "beta", 3)}));
  hosts.emplace(WorkerId{2}, nestingHost(2, 2, {running(21, "alpha", 2)}));
  UtilizationTimeline timeline(3);
  timeline.sample(hosts, book);
  // A lull of alpha on host 1 is filled by beta.
  hosts.at(WorkerId{1}).underlying = {running(11, "alpha", 0), running(12, "beta", 4)};
  timeline.sample(hosts, book);
  const auto& series = timeline.series();
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series.at({"alpha", 1}).samples(), (std::deque<float>{0.25f, 0.0f}));
  EXPECT_EQ(series.at({"beta", 1}).samples(), (std::deque<float>{0.75f, 1.0f}));
  EXPECT_EQ(series.at({"alpha", 2}).samples(), (std::deque<float>{1.0f, 1.0f}));

  // Host 2 is lost and the window keeps only the last 3 samples.
  hosts.erase(WorkerId{2});
  for (int i = 0; i < 4; ++i) timeline.sample(hosts, book);
  EXPECT_EQ(series.count({"alpha", 2}), 0u);
  EXPECT_EQ(series.at({"beta", 1}).samples().size(), 3u);
  // Workers of experiments the coordinator does not know are not drawn.
  hosts.at(WorkerId{1}).underlying.push_back(running(13, "stray", 4));
  timeline.sample(hosts, book);
  EXPECT_EQ(series.count({"stray", 1}), 0u);
}

TEST(DashboardJson, ModelMatchesTheTablesAndEscapesNames) {
  FakeClock clock;
  ExperimentBook book(clock, makeNullLogger("test"), 1s, 30s);
  ASSERT_TRUE(book.open(spec("quote\"d", 3)).ok());
  HostTable hosts;
  WorkerRecord host = nestingHost(7, 4, {running(1, "quote\"d", 2, 5)});
  host.snapshot.liveSessions = 5;
  host.snapshot.busySlots = 2;
  host.utilization.push(0.5f);
  host.utilization.push(1.0f);
  hosts.emplace(WorkerId{7}, host);
  UtilizationTimeline timeline;
  timeline.sample(hosts, book);
  DashboardModel model = buildDashboardModel(hosts, book, timeline, 1);
  ASSERT_EQ(model.hosts.size(), 1u);
  EXPECT_EQ(model.hosts[0].sessions, 5u);
  EXPECT_DOUBLE_EQ(model.hosts[0].utilization1m, 0.75);
  ASSERT_EQ(model.experiments.size(), 1u);
  EXPECT_EQ(model.experiments[0].requested, 3u);
  EXPECT_EQ(model.experiments[0].ready, 0u);  // no heartbeat confirmed a worker yet
  std::string json = renderDashboardJson(model);
  EXPECT_NE(json.find("\"totals\": {\"hosts\": 1, \"experiments\": 1, \"slots\": 4, \"busy\": 2, "
                      "\"sessions\": 5}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"name\": \"quote\\\"d\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"experiment\": \"quote\\\"d\", \"host\": 7, \"samples\": [0.500]"),
            std::string::npos)
      << json;
}

TEST(DashboardPublisher, ReadersSeeTheLatestCompleteCopy) {
  DashboardPublisher publisher;
  EXPECT_EQ(*publisher.latest(), "{}");
  auto held = publisher.latest();
  publisher.publish("{\"a\": 1}");
  EXPECT_EQ(*held, "{}");  // a reader's copy stays valid while the loop publishes
  EXPECT_EQ(*publisher.latest(), "{\"a\": 1}");
}

TEST(Observability, BadListenAddressesFailClearly) {
  SteadyClock clock;
  auto worker = WorkerObservability::start("not an address", clock, makeNullLogger("w"));
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), ErrorCode::kInvalidArgument);
  auto coordinator = CoordinatorObservability::start("127.0.0.1:70000", clock, makeNullLogger("c"));
  ASSERT_FALSE(coordinator.ok());
  EXPECT_EQ(coordinator.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Observability, APortInUseIsRefusedAndTheFirstKeepsServing) {
  SteadyClock clock;
  auto first = WorkerObservability::start("127.0.0.1:0", clock, makeNullLogger("w"));
  ASSERT_TRUE(first.ok()) << first.status().toString();
  int port = (*first)->port();
  ASSERT_GT(port, 0);
  auto second = CoordinatorObservability::start("127.0.0.1:" + std::to_string(port), clock,
                                                makeNullLogger("c"));
  EXPECT_FALSE(second.ok());
  auto reply = observe_test::get(port, "/metrics");
  EXPECT_EQ(reply.status, 200);
  EXPECT_NE(reply.body.find("kiln_slots"), std::string::npos);
}

TEST(WorkerCommandLine, MetricsListenIsCheckedBeforeAnythingStarts) {
  for (const char* bad : {"9100", "127.0.0.1:http", "127.0.0.1:65536", "a b:1"}) {
    CLI::App app;
    WorkerCommandLine options;
    addWorkerOptions(app, options);
    std::vector<std::string> args = {bad, "--metrics-listen"};  // CLI11 parses in reverse
    EXPECT_THROW(app.parse(args), CLI::ValidationError) << bad;
  }
  CLI::App app;
  WorkerCommandLine options;
  addWorkerOptions(app, options);
  std::vector<std::string> args = {"127.0.0.1:0", "--metrics-listen"};
  app.parse(args);
  EXPECT_EQ(options.config.metricsListen, "127.0.0.1:0");
}

}  // namespace
}  // namespace kiln
