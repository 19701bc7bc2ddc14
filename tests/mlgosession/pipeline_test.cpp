// Batch compile jobs: spec parsing against hostile input, steps run with
// overridden dependencies (late binding), real -Oz and inline-default jobs,
// the mlgo-compile session through a local cluster, and cancellation.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "datasets/registry.h"
#include "mlgosession/compile_session.h"
#include "mlgosession/pipeline.h"
#include "tests/mlgosession/session_test_support.h"

namespace kiln::mlgosession::testing {
namespace {

using namespace std::chrono_literals;
using mlgo::testing::noChildProcesses;
using mlgo::testing::TempDir;

std::shared_ptr<const std::string> benchmarkBytes(const std::string& uri) {
  auto registry = datasets::DatasetRegistry::create({});
  auto bytes = registry->resolve(uri);
  EXPECT_TRUE(bytes.ok()) << bytes.status().toString();
  return std::make_shared<const std::string>(bytes.ok() ? bytes->bytes : std::string());
}

struct JobFixture {
  JobFixture() : benchmark(benchmarkBytes("benchmark://kiln-bench-v0/huffman")) {
    deps = contextDependencies(MlgoConfig{}, clock, temp.path(), benchmark, killSwitch);
  }
  Result<JobOutputs> run(const std::string& spec, const Dependencies& overrides = {}) {
    auto parsed = parseJobSpec(spec);
    if (!parsed.ok()) return parsed.status();
    return runJob(*parsed, deps.overriddenBy(overrides));
  }
  TempDir temp;
  SteadyClock clock;
  KillSwitch killSwitch;
  std::shared_ptr<const std::string> benchmark;
  Dependencies deps;
};

TEST(MlgoPipelineTest, HostileSpecsAreRefusedWithTheReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not JSON"},
      {"[1,2]", "JSON object"},
      {R"({"steps":[]})", "non-empty"},
      {R"({"steps":[{"kind":"rm -rf"}]})", "is not a step"},
      {R"({"steps":[{"kind":"compile","flags":["-load=evil.so"]}]})", "not allowed"},
      {R"({"steps":[{"kind":"compile","flags":["-o","/etc/x"]}]})", "not allowed"},
      {R"({"steps":[{"kind":"compile","flags":["-passes=a;rm -rf /"]}]})", "pass pipeline"},
      {R"({"steps":[{"kind":"compile","flags":[3]}]})", "array of strings"},
      {R"({"steps":[{"kind":"native-size","flags":["-Oz"]}]})", "only compile steps"},
      {R"({"steps":[{"kind":"native-size"}],"timeout_ms":0})", "timeout_ms"},
      {R"({"steps":[{"kind":"native-size"}],"surprise":1})", "unknown field"},
  };
  for (const auto& [spec, expected] : cases) {
    auto parsed = parseJobSpec(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(expected), std::string::npos)
        << spec << " -> " << parsed.status().toString();
  }
  EXPECT_FALSE(parseJobSpec(std::string(100 << 10, '{')).ok());
}

// Found by fuzz_job_spec: opt's view-* passes write the graph to the system's
// temporary directory and run a viewer (xdg-open, dot, ...) on it, so a job
// could make the worker start programs.
TEST(MlgoPipelineTest, PipelinesThatStartAGraphViewerAreRefused) {
  for (const char* flag : {"-passes=view-cfg", "-passes=cgscc(function(view-dom-only))",
                           "-passes=instcombine,view-callgraph", "-passes=view-"}) {
    Status allowed = allowedFlag(flag);
    EXPECT_EQ(allowed.code(), ErrorCode::kInvalidArgument) << flag;
    EXPECT_NE(allowed.message().find("graph viewer"), std::string::npos) << allowed.toString();
  }
  for (const char* flag : {"-passes=dot-cfg", "-passes=default<O2>", "-passes=preview-x"}) {
    EXPECT_TRUE(allowedFlag(flag).ok()) << flag;
  }
  auto parsed = parseJobSpec(R"({"steps":[{"kind":"compile","flags":["-passes=view-cfg"]}]})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("steps[0]"), std::string::npos)
      << parsed.status().toString();
}

TEST(MlgoPipelineTest, OzCompileMeasuresASmallerModuleThanO0) {
  JobFixture fixture;
  auto oz = fixture.run(R"({"steps":[{"kind":"compile","flags":["-Oz"]},{"kind":"native-size"}]})");
  ASSERT_TRUE(oz.ok()) << oz.status().toString();
  auto o0 = fixture.run(R"({"steps":[{"kind":"compile","flags":["-O0"]},{"kind":"native-size"}]})");
  ASSERT_TRUE(o0.ok()) << o0.status().toString();
  ASSERT_TRUE(oz->nativeSize && o0->nativeSize);
  EXPECT_GT(*oz->nativeSize, 0);
  EXPECT_LT(*oz->nativeSize, *o0->nativeSize);
  EXPECT_NE(oz->log.find("compile -Oz ok"), std::string::npos) << oz->log;
}

TEST(MlgoPipelineTest, InlineDefaultEmitsATrainingLogOfEveryDecision) {
  JobFixture fixture;
  auto job = fixture.run(
      R"({"steps":[{"kind":"inline-default"},{"kind":"native-size"},{"kind":"training-log"}]})");
  ASSERT_TRUE(job.ok()) << job.status().toString();
  ASSERT_FALSE(job->records.empty());
  const std::string& log = job->trainingLog;
  EXPECT_TRUE(log.starts_with(R"({"features":[{"name":"sroa_savings")")) << log.substr(0, 80);
  // Every decision has one observation and one outcome record of fixed size.
  std::size_t observations = 0, outcomes = 0;
  for (std::size_t at = 0; (at = log.find("{\"observation\":", at)) != std::string::npos; ++at) {
    ++observations;
  }
  for (std::size_t at = 0; (at = log.find("{\"outcome\":", at)) != std::string::npos; ++at) {
    ++outcomes;
  }
  EXPECT_EQ(observations, job->records.size());
  EXPECT_EQ(outcomes, job->records.size());
  EXPECT_GT(*job->nativeSize, 0);
}

TEST(MlgoPipelineTest, OverriddenDependenciesBindAtRunTime) {
  JobFixture fixture;
  const std::string spec =
      R"({"steps":[{"kind":"compile","flags":["-Oz"]},{"kind":"native-size"}]})";
  // A different opt: the failing program is what runs.
  Dependencies falseOpt;
  falseOpt.provide(Dependency::kOpt, [](Resolved& r) {
    r.opt = "false";
    return okStatus();
  });
  auto failed = fixture.run(spec, falseOpt);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(failed.status().message().find("step 1 (compile -Oz)"), std::string::npos)
      << failed.status().toString();

  // Another module: a different benchmark gives a different size.
  Dependencies otherModule;
  auto other = benchmarkBytes("benchmark://kiln-bench-v0/nqueens");
  otherModule.provide(Dependency::kBenchmark, [other](Resolved& r) {
    r.benchmark = other;
    return okStatus();
  });
  auto mine = fixture.run(spec);
  auto theirs = fixture.run(spec, otherModule);
  ASSERT_TRUE(mine.ok() && theirs.ok());
  EXPECT_NE(*mine->nativeSize, *theirs->nativeSize);

  // A deadline that has passed: the job stops before the compile step.
  FakeClock fake;
  Dependencies frozen;
  frozen.provide(Dependency::kClock, [&fake](Resolved& r) {
    r.clock = &fake;
    return okStatus();
  });
  frozen.provide(Dependency::kDeadline, [&fake](Resolved& r) {
    r.clock = &fake;
    r.deadline = fake.now() - 1s;
    return okStatus();
  });
  auto late = fixture.run(spec, frozen);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), ErrorCode::kTimeout) << late.status().toString();

  // A missing provider is named.
  Dependencies none;
  auto parsed = parseJobSpec(spec);
  auto missing = runJob(*parsed, none);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("clock"), std::string::npos);
}

TEST(MlgoPipelineTest, JobTimeoutKillsAHangingCompiler) {
  JobFixture fixture;
  ClusterFixture links;  // for fakeOpt(); its cluster is idle
  Dependencies hanging;
  std::string opt = links.fakeOpt("hang");
  hanging.provide(Dependency::kOpt, [opt](Resolved& r) {
    r.opt = opt;
    return okStatus();
  });
  auto started = std::chrono::steady_clock::now();
  auto job =
      fixture.run(R"({"steps":[{"kind":"compile","flags":["-Oz"]}],"timeout_ms":300})", hanging);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), ErrorCode::kTimeout) << job.status().toString();
  EXPECT_LT(took, 5s);
  EXPECT_TRUE(eventually([] { return noChildProcesses(); }));
}

TEST(MlgoPipelineTest, CancelKillsTheRunningCompilersAtOnce) {
  ClusterFixture fixture;
  ASSERT_TRUE(
      fixture.client->workerParameter(fixture.worker(), "mlgo.opt", fixture.fakeOpt("hang")).ok());
  // Several jobs in flight; the request deadline cancels them (the worker calls cancel()).
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = "benchmark://kiln-bench-v0/huffman";
  options.timeout = 400ms;
  std::vector<std::unique_ptr<client::Session>> sessions;
  std::vector<std::uint64_t> requests;
  for (int i = 0; i < 2; ++i) {
    auto session = fixture.client->startSession(options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    sessions.push_back(std::move(session).value());
    auto sent = sessions.back()->sendStep(
        {Value(std::string(R"({"steps":[{"kind":"compile","flags":["-Oz"]}]})"))}, {});
    ASSERT_TRUE(sent.ok());
    requests.push_back(*sent);
  }
  auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    auto stepped = sessions[i]->awaitStep(requests[i]);
    EXPECT_FALSE(stepped.ok());
  }
  // Without cancel() the fake opt would sleep 60 s and the job 120 s.
  EXPECT_TRUE(eventually([] { return noChildProcesses(); })) << "a cancelled compiler survived";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(MlgoPipelineTest, CancelFromAnotherThreadStopsAJobDirectly) {
  ClusterFixture links;
  TempDir temp;
  std::filesystem::create_directories(temp.path() / "work");
  BenchmarkCache cache(1 << 20);
  SteadyClock clock;
  ContextResources resources{temp.path() / "work", cache, makeNullLogger("test"), clock};
  MlgoContext context(resources);
  ASSERT_TRUE(context.handleParameter("mlgo.opt", links.fakeOpt("hang")).ok());
  MlgoCompileSession session(context);
  ASSERT_TRUE(
      session.init(0, {"benchmark://x", benchmarkBytes("benchmark://kiln-bench-v0/bfs")}).ok());
  auto running = std::async(std::launch::async, [&] {
    ActionOutcome outcome;
    return session.applyAction(
        Value(std::string(R"({"steps":[{"kind":"compile","flags":["-Oz"]}]})")), outcome);
  });
  std::this_thread::sleep_for(200ms);
  auto cancelled = std::chrono::steady_clock::now();
  session.cancel();
  ASSERT_EQ(running.wait_for(5s), std::future_status::ready);
  Status status = running.get();
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled, 1s);
  EXPECT_EQ(status.code(), ErrorCode::kCompileError) << status.toString();
  EXPECT_NE(status.message().find("cancelled"), std::string::npos) << status.toString();
  EXPECT_TRUE(noChildProcesses());
}

TEST(MlgoPipelineTest, CompileSessionThroughTheCluster) {
  ClusterFixture fixture;
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = "benchmark://kiln-bench-v0/huffman";
  auto session = fixture.client->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  auto stepped = (*session)->step(
      {Value(
          std::string(R"({"steps":[{"kind":"inline-default"},{"kind":"compile","flags":["-Oz"]},)"
                      R"({"kind":"native-size"},{"kind":"training-log"}],"timeout_ms":60000})"))},
      std::vector<std::string>{"NativeSize", "TrainingLog", "JobLog"});
  ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
  EXPECT_TRUE(stepped->endOfEpisode);
  EXPECT_GT(stepped->observations[0].as<std::int64_t>(), 0);
  EXPECT_FALSE(stepped->observations[1].as<Bytes>().data.empty());
  EXPECT_NE(stepped->observations[2].as<std::string>().find("native-size ok"), std::string::npos);

  auto bad = fixture.client->startSession(options);
  ASSERT_TRUE(bad.ok());
  auto refused = (*bad)->step({Value(std::string("{\"steps\":[{\"kind\":\"x\"}]}"))},
                              std::vector<std::string>{});
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE((*session)->end().ok());
  EXPECT_TRUE((*bad)->end().ok());
  EXPECT_TRUE(eventually([&] { return fixture.leftoverFiles() == 0; }));
}

}  // namespace
}  // namespace kiln::mlgosession::testing
