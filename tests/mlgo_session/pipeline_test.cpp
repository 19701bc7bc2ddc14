// Batch compile jobs: spec parsing against hostile input, steps run with
// overridden dependencies (late binding), real -Oz and inline-default jobs,
// the mlgo-compile session through a local cluster, and cancellation.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <thread>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/pass_table.h"
#include "compilers/mlgo_session/compile_session.h"
#include "compilers/mlgo_session/native_size.h"
#include "compilers/mlgo_session/pipeline.h"
#include "compilers/mlgo_session/run_tool.h"
#include "programs/datasets/registry.h"
#include "tests/mlgo_session/session_test_support.h"
#include "tests/support/wait.h"

namespace kiln::mlgo_session::testing {
namespace {

using namespace std::chrono_literals;
using mlgo_channel::testing::noChildProcesses;
using mlgo_channel::testing::TempDir;

std::shared_ptr<const std::string> benchmarkBytes(const std::string& uri) {
  auto registry = datasets::DatasetRegistry::create({});
  auto bytes = registry->resolve(uri);
  EXPECT_TRUE(bytes.ok()) << bytes.status().toString();
  return std::make_shared<const std::string>(bytes.ok() ? bytes->bytes : std::string());
}

// The passes a job may name, as a worker's mlgo context allows them.
const JobPasses& jobPasses() {
  static const JobPasses passes =
      JobPasses::fromTable(*llvm_engine::PassTable::fromRegistry().value());
  return passes;
}

Result<JobSpec> parseJobSpec(std::string_view json) {
  return mlgo_session::parseJobSpec(json, jobPasses());
}

Status allowedFlag(std::string_view flag) { return mlgo_session::allowedFlag(flag, jobPasses()); }

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
      {R"({"steps":[{"kind":"compile","flags":["-passes=a;rm -rf /"]}]})",
       "not a pass a job may run"},
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

// A job's pipeline names only allowed passes. Found by fuzz_job_spec: opt's
// view-* passes write the graph to the system's temporary directory and run
// a viewer (xdg-open, dot, ...) on it. Issue 48: insert-gcov-profiling with
// the module's !llvm.gcov wrote files at paths the client chose (opt-19 does
// it too), so the filter is an allow-list, not a list of what is known bad.
TEST(MlgoPipelineTest, PipelinesMayNameOnlyTheAllowedPasses) {
  for (const char* flag :
       {"-passes=view-cfg", "-passes=cgscc(function(view-dom-only))",
        "-passes=instcombine,view-callgraph", "-passes=view-", "-passes=dot-cfg",
        "-passes=insert-gcov-profiling", "-passes=module(insert-gcov-profiling)",
        "-passes=memprof-use<profile-filename=secret>", "-passes=print<domtree>",
        "-passes=require<profile-summary>", "-passes=preview-x", "-passes=default<O9>",
        "-passes=function<eager-inv>(sroa", "-passes=sroa(instcombine)",
        "-passes=repeat<100000>(instcombine)", "-passes=instcombine,,sroa"}) {
    Status allowed = allowedFlag(flag);
    EXPECT_EQ(allowed.code(), ErrorCode::kInvalidArgument) << flag;
    EXPECT_NE(allowed.message().find("docs/actions.md"), std::string::npos) << allowed.toString();
  }
  EXPECT_NE(allowedFlag("-passes=function(insert-gcov-profiling)")
                .message()
                .find("names insert-gcov-profiling, which is not a pass a job may run"),
            std::string::npos);
  for (const char* flag :
       {"-passes=default<O2>", "-passes=default<Oz>", "-passes=thinlto-pre-link<O2>",
        "-passes=instcombine<no-verify-fixpoint>", "-passes=sroa,instcombine,simplifycfg",
        "-passes=cgscc(function(sroa))", "-passes=module(function<eager-inv>(loop-mssa(licm)))",
        "-passes=scc-oz-module-inliner", "-passes=repeat<3>(instcombine)"}) {
    EXPECT_TRUE(allowedFlag(flag).ok()) << flag << ": " << allowedFlag(flag).toString();
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

// What a step was given for the dependencies it declared.
class RecordingStep final : public Step {
 public:
  explicit RecordingStep(std::vector<Resolved>& seen) : seen_(seen) {}
  std::string name() const override { return "record"; }
  std::vector<Dependency> needs() const override {
    return {Dependency::kDeadline, Dependency::kLimits};
  }
  Result<std::filesystem::path> run(const std::filesystem::path& input, const Resolved& deps,
                                    JobOutputs&) override {
    seen_.push_back(deps);
    return input;
  }

 private:
  std::vector<Resolved>& seen_;
};

// A job spec is a client's: its timeout_ms and memory_limit_mb may lower
// the operator's compile timeout and --compile-memory-mb, never raise them.
TEST(MlgoPipelineTest, AJobsLimitsOnlyLowerTheOperators) {
  FakeClock clock;
  Dependencies operatorLimits;
  operatorLimits.provide(Dependency::kClock, [&clock](Resolved& r) {
    r.clock = &clock;
    return okStatus();
  });
  operatorLimits.provide(Dependency::kDeadline, [&clock](Resolved& r) {
    r.deadline = clock.now() + 10s;
    return okStatus();
  });
  operatorLimits.provide(Dependency::kLimits, [](Resolved& r) {
    r.memoryLimitBytes = std::uint64_t{256} << 20;
    return okStatus();
  });
  auto runWith = [&](std::chrono::milliseconds timeout, std::uint64_t memoryMb,
                     const Dependencies& deps) {
    std::vector<Resolved> seen;
    JobSpec spec;
    spec.steps.push_back(std::make_unique<RecordingStep>(seen));
    spec.timeout = timeout;
    spec.memoryLimitBytes = memoryMb << 20;
    EXPECT_TRUE(runJob(spec, deps).ok());
    EXPECT_EQ(seen.size(), 1u);
    return seen.empty() ? Resolved{} : seen.front();
  };
  // Asked for more than the operator gives: the operator's limits hold.
  Resolved higher = runWith(3'600'000ms, 1 << 20, operatorLimits);
  EXPECT_EQ(higher.deadline, clock.now() + 10s);
  EXPECT_EQ(higher.memoryLimitBytes, std::uint64_t{256} << 20);
  // Asked for less: the job's hold.
  Resolved lower = runWith(2000ms, 64, operatorLimits);
  EXPECT_EQ(lower.deadline, clock.now() + 2s);
  EXPECT_EQ(lower.memoryLimitBytes, std::uint64_t{64} << 20);
  // No operator memory limit (--compile-memory-mb 0): the job may set one.
  Dependencies unlimited = operatorLimits;
  unlimited.provide(Dependency::kLimits, [](Resolved& r) {
    r.memoryLimitBytes.reset();
    return okStatus();
  });
  EXPECT_EQ(runWith(2000ms, 64, unlimited).memoryLimitBytes, std::uint64_t{64} << 20);
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
  EXPECT_TRUE(testsupport::waitUntil([] { return noChildProcesses(); }, std::chrono::seconds(5)));
}

TEST(MlgoPipelineTest, CancelKillsTheRunningCompilersAtOnce) {
  ClusterFixture fixture;
  fixture.useOpt(fixture.fakeOpt("hang"));
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
  EXPECT_TRUE(testsupport::waitUntil([] { return noChildProcesses(); }, std::chrono::seconds(5)))
      << "a cancelled compiler survived";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
}

TEST(MlgoPipelineTest, CancelFromAnotherThreadStopsAJobDirectly) {
  ClusterFixture links;
  TempDir temp;
  std::filesystem::create_directories(temp.path() / "work");
  BenchmarkCache cache(1 << 20);
  SteadyClock clock;
  ContextResources resources{temp.path() / "work", cache, makeNullLogger("test"), clock};
  resources.settings.mlgoOpt = links.fakeOpt("hang");  // the operator's --mlgo-opt
  MlgoContext context(resources);
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

std::string compileToObject(const TempDir& temp, const std::string& bitcode) {
  const std::filesystem::path input = temp.path() / "valid.bc";
  const std::filesystem::path output = temp.path() / "valid.o";
  std::ofstream(input, std::ios::binary) << bitcode;
  auto ran = runSubprocess({"llc-19", "-filetype=obj", input.string(), "-o", output.string()}, 60s);
  EXPECT_TRUE(ran.ok() && ran->status.success()) << "llc-19 did not compile the benchmark";
  std::ifstream in(output, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The files the mlgo types measure are the client's program as sent (a
// job's native-size step right after load) or made from it: garbage and
// truncated bitcode or objects are a compile error, read inside the crash
// guard, and the worker keeps serving. Through a worker, what is not an
// object is a module checked before any tool runs: invalid-argument at start.
TEST(MlgoPipelineTest, HostileFilesGiveACompileErrorAndTheWorkerKeepsServing) {
  TempDir temp;
  const std::string bitcode = *benchmarkBytes("benchmark://kiln-bench-v0/huffman");
  ASSERT_TRUE(bitcode.starts_with("BC\xC0\xDE")) << "the benchmark is not raw bitcode";
  const std::string object = compileToObject(temp, bitcode);
  ASSERT_TRUE(
      object.starts_with("\x7F"
                         "ELF"));
  std::string hugeSections = object;
  // e_shoff (ELF64, little endian) far past the end of the file.
  for (int i = 0; i < 8; ++i) hugeSections[0x28 + i] = '\x7f';
  const std::pair<const char*, std::string> cases[] = {
      {"garbage", std::string(4096, '\x5a')},
      {"bitcode magic then garbage", std::string("BC\xC0\xDE") + std::string(512, '\xff')},
      {"truncated bitcode", bitcode.substr(0, bitcode.size() / 2)},
      {"bitcode cut after its header", bitcode.substr(0, 40)},
      {"truncated object", object.substr(0, object.size() / 2)},
      {"object header only", object.substr(0, 64)},
      {"object with its section table out of bounds", hugeSections},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    const std::filesystem::path file = temp.path() / "hostile";
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    auto size = nativeTextSize(file);
    ASSERT_FALSE(size.ok());
    EXPECT_EQ(size.status().code(), ErrorCode::kCompileError) << size.status().toString();
  }
  EXPECT_GT(*nativeTextSize(temp.path() / "valid.o"), 0);
  EXPECT_GT(*nativeTextSize(temp.path() / "valid.bc"), 0);

  // The same through a worker: a job that measures the client's bytes as sent.
  ClusterFixture fixture;
  const std::string measure = R"({"steps":[{"kind":"native-size"}]})";
  auto runJobOn = [&](const std::string& program) -> Status {
    client::SessionOptions options;
    options.sessionType = "mlgo-compile";
    options.benchmark = "benchmark://client/hostile";
    options.program = program;
    KILN_ASSIGN_OR_RETURN(auto session, fixture.client->startSession(options));
    return session->step({Value(measure)}, std::vector<std::string>{"NativeSize"}).status();
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    Status status = runJobOn(bytes);
    const bool object = bytes.starts_with(
        "\x7f"
        "ELF");
    EXPECT_EQ(status.code(), object ? ErrorCode::kCompileError : ErrorCode::kInvalidArgument)
        << status.toString();
    if (!object) {
      EXPECT_NE(status.message().find("benchmark://client/hostile"), std::string::npos)
          << status.toString();
    }
  }
  EXPECT_TRUE(runJobOn(bitcode).ok());
  EXPECT_TRUE(runJobOn(object).ok());
}

// data/bitcode_reader_crash.bc: the bitcode of a two-function C file
// (clang-19 -O1) with two bytes changed, found by mutating it; LLVM 19's
// bitcode reader dies of SIGSEGV on it (opt-19 does too). Unguarded, the
// worker that measures it would die with every session it holds.
TEST(MlgoPipelineTest, BitcodeThatCrashesLlvmsReaderIsACompileError) {
  const std::filesystem::path crasher = kSourceDir / "data" / "bitcode_reader_crash.bc";
  ASSERT_TRUE(std::filesystem::exists(crasher));
  auto size = nativeTextSize(crasher);
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.status().code(), ErrorCode::kCompileError) << size.status().toString();
  EXPECT_NE(size.status().message().find("signal 11"), std::string::npos)
      << size.status().toString();

  // Through a worker, checked as a module before any job runs: the start is
  // answered with the reader's crash, and the worker (in process here, so it
  // keeps serving rather than restarting) still starts and runs sessions.
  ClusterFixture fixture;
  std::ifstream in(crasher, std::ios::binary);
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = "benchmark://client/crasher";
  options.program = std::string(std::istreambuf_iterator<char>(in), {});
  auto session = fixture.client->startSession(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument) << session.status().toString();
  EXPECT_NE(session.status().message().find("signal 11"), std::string::npos)
      << session.status().toString();
  options.benchmark = "benchmark://kiln-bench-v0/huffman";
  options.program.reset();
  auto next = fixture.client->startSession(options);
  ASSERT_TRUE(next.ok()) << next.status().toString();
  auto good = (*next)->step({Value(std::string(R"({"steps":[{"kind":"native-size"}]})"))},
                            std::vector<std::string>{"NativeSize"});
  ASSERT_TRUE(good.ok()) << good.status().toString();
  EXPECT_GT(good->observations[0].as<std::int64_t>(), 0);
}

// A module whose !llvm.gcov names where insert-gcov-profiling writes.
std::string gcovModule(const std::filesystem::path& notes) {
  return "target triple = \"x86_64-unknown-linux-gnu\"\n"
         "define i32 @main() !dbg !4 {\n  ret i32 0, !dbg !7\n}\n"
         "!llvm.dbg.cu = !{!0}\n!llvm.module.flags = !{!3}\n!llvm.gcov = !{!8}\n"
         "!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: \"x\", "
         "isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)\n"
         "!1 = !DIFile(filename: \"a.c\", directory: \"/tmp\")\n"
         "!3 = !{i32 2, !\"Debug Info Version\", i32 3}\n"
         "!4 = distinct !DISubprogram(name: \"main\", scope: !1, file: !1, line: 1, type: !5, "
         "scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)\n"
         "!5 = !DISubroutineType(types: !6)\n!6 = !{null}\n"
         "!7 = !DILocation(line: 1, column: 1, scope: !4)\n"
         "!8 = !{!\"" +
         notes.string() + "\", !\"" + notes.string() + ".gcda\", !0}\n";
}

// Issue 48: -passes=insert-gcov-profiling and the module's !llvm.gcov made
// opt write a file at any path the client named, with text it chose.
TEST(MlgoPipelineTest, AJobCannotMakeOptWriteWhereTheModuleSays) {
  ClusterFixture fixture;
  const std::filesystem::path notes = fixture.temp.path() / "written-by-a-client.gcno";
  const std::string gcovJob =
      R"({"steps":[{"kind":"compile","flags":["-passes=insert-gcov-profiling"]}]})";
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = "inline://hostile/gcov";
  options.program = gcovModule(notes);
  auto session = fixture.client->startSession(options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("!llvm.gcov"), std::string::npos)
      << session.status().toString();
  // The pass alone is refused too, on any module.
  options.benchmark = "benchmark://kiln-bench-v0/huffman";
  options.program.reset();
  auto plain = fixture.client->startSession(options);
  ASSERT_TRUE(plain.ok()) << plain.status().toString();
  auto refused = (*plain)->step({Value(gcovJob)}, std::vector<std::string>{});
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("insert-gcov-profiling"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(notes));
}

// Defence in depth: with the module checks out of the way (the tools run
// directly), opt and llc still cannot read a host file a module names or
// write outside their directory.
TEST(MlgoPipelineTest, ConfinedCompilersCannotReadOrWriteOutsideTheirDirectory) {
  if (FileConfinement::kernelAbi() == 0) GTEST_SKIP() << "this kernel has no Landlock";
  TempDir outside;
  TempDir scratch;
  const std::string secret = "kiln_secret_line_e41a never read by a compiler";
  std::ofstream(outside.path() / "secret.s") << secret << "\n";
  const std::filesystem::path notes = outside.path() / "written.gcno";
  std::ofstream(scratch.path() / "gcov.ll") << gcovModule(notes);
  std::ofstream(scratch.path() / "include.ll")
      << "target triple = \"x86_64-unknown-linux-gnu\"\nmodule asm \".include \\22"
      << (outside.path() / "secret.s").string() << "\\22\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  auto run = [&](std::vector<std::string> argv) {
    ToolRun tool;
    tool.argv = std::move(argv);
    tool.workingDirectory = scratch.path();
    tool.deadline = std::chrono::steady_clock::now() + 60s;
    return runTool(tool);
  };
  Status wrote =
      run({"opt-19", "-passes=insert-gcov-profiling", (scratch.path() / "gcov.ll").string(), "-o",
           (scratch.path() / "out.bc").string()});
  EXPECT_FALSE(std::filesystem::exists(notes)) << wrote.toString();
  Status read = run({"llc-19", "-filetype=obj", (scratch.path() / "include.ll").string(), "-o",
                     (scratch.path() / "out.o").string()});
  EXPECT_FALSE(read.ok());
  EXPECT_EQ(read.message().find(secret), std::string::npos) << read.toString();
  // The same tools still compile an ordinary module in their directory.
  std::ofstream(scratch.path() / "plain.ll") << "define i32 @main() {\n  ret i32 0\n}\n";
  EXPECT_TRUE(run({"llc-19", "-filetype=obj", (scratch.path() / "plain.ll").string(), "-o",
                   (scratch.path() / "plain.o").string()})
                  .ok());
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
  EXPECT_TRUE(testsupport::waitUntil([&] { return fixture.leftoverFiles() == 0; },
                                     std::chrono::seconds(5)));
}

}  // namespace
}  // namespace kiln::mlgo_session::testing
