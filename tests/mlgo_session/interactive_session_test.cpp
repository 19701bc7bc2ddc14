// mlgo-inline and mlgo-regalloc end to end through a local cluster with the
// real opt-19 / llc-19, forks, misbehaving compilers (fake_opt.py) and the
// 100-session leak check.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "compilers/mlgo_session/mlgo_context.h"
#include "tests/mlgo_session/session_test_support.h"
#include "tests/support/wait.h"

namespace kiln::mlgo_session::testing {
namespace {

using namespace std::chrono_literals;
using mlgo_channel::testing::noChildProcesses;

client::SessionOptions sessionOn(const std::string& type, const std::string& benchmark) {
  client::SessionOptions options;
  options.sessionType = type;
  options.benchmark = benchmark;
  options.observations = {"DefaultAdvice"};
  return options;
}

TEST(MlgoInteractiveSessionTest, InlinerDefaultAnswersReproduceTheDefaultSize) {
  ClusterFixture fixture;
  for (const char* uri : {"benchmark://kiln-bench-v0/huffman", "benchmark://kiln-bench-v0/bfs",
                          "benchmark://kiln-bench-v0/json_tokenizer", "generator://csmith-v0/7"}) {
    SCOPED_TRACE(uri);
    auto session = fixture.client->startSession(sessionOn("mlgo-inline", uri));
    ASSERT_TRUE(session.ok()) << session.status().toString();
    auto episode = playDefaultEpisode(**session);
    ASSERT_TRUE(episode.ok()) << episode.status().toString();
    EXPECT_GT(episode->decisions, 0);
    EXPECT_GT(episode->nativeSize, 0);
    EXPECT_EQ(episode->nativeSize, episode->defaultNativeSize);
    EXPECT_EQ(episode->reward, 0);
    EXPECT_TRUE((*session)->end().ok());
  }
}

TEST(MlgoInteractiveSessionTest, NeverInliningChangesTheSizeAndTheReward) {
  ClusterFixture fixture;
  auto session =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  ASSERT_TRUE(session.ok()) << session.status().toString();
  bool ended = false;
  for (int i = 0; i < 10000 && !ended; ++i) {
    auto stepped = (*session)->step({Value(std::int64_t{0})}, std::vector<std::string>{});
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    ended = stepped->endOfEpisode;
  }
  ASSERT_TRUE(ended);
  auto figures = (*session)->step(
      {}, std::vector<std::string>{"NativeSize", "DefaultNativeSize", "Reward:NativeSizeSaved"});
  ASSERT_TRUE(figures.ok()) << figures.status().toString();
  std::int64_t size = figures->observations[0].as<std::int64_t>();
  std::int64_t defaultSize = figures->observations[1].as<std::int64_t>();
  EXPECT_GT(size, 0);
  EXPECT_EQ(figures->observations[2].as<std::int64_t>(), defaultSize - size);
}

TEST(MlgoInteractiveSessionTest, FeaturesMatchTheDeclaredSpaces) {
  ClusterFixture fixture;
  client::SessionOptions options = sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman");
  options.observations = {"Features", "callee_basic_block_count", "DefaultAdvice"};
  auto session = fixture.client->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  const auto& initial = (*session)->initialObservations();
  const auto* dict = initial[0].getIf<ValueDict>();
  ASSERT_NE(dict, nullptr);
  EXPECT_EQ(dict->size(), 39U);
  // LLVM 19 puts its default decision in the callee_basic_block_count slot.
  EXPECT_EQ(initial[1].as<Int64Tensor>().values.at(0), initial[2].as<std::int64_t>());
}

// Features are decoded only for the spaces a step asks for: whichever subset
// is asked, and after steps that asked for none, each feature space holds
// what the dict holds under its name, and DefaultAdvice reads the same record.
TEST(MlgoInteractiveSessionTest, EachFeatureSpaceMatchesTheDictAtEveryStep) {
  ClusterFixture fixture;
  client::SessionOptions options = sessionOn("mlgo-inline", "generator://csmith-v0/7");
  options.observations = {"Features"};
  auto session = fixture.client->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  std::vector<std::string> names{"Features", "DefaultAdvice"};
  for (const NamedValue& feature : (*session)->initialObservations()[0].as<ValueDict>()) {
    names.push_back(feature.name);
  }
  ASSERT_EQ(names.size(), 2U + 39U);
  std::int64_t advice = 1;
  int checked = 0;
  for (int step = 0; step < 12; ++step) {
    // Every third step observes nothing at all.
    std::vector<std::string> asked = step % 3 == 1 ? std::vector<std::string>{} : names;
    auto stepped = (*session)->step({Value(advice)}, asked);
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    if (stepped->endOfEpisode) break;
    if (asked.empty()) {
      EXPECT_TRUE(stepped->observations.empty());
      continue;
    }
    const auto& dict = stepped->observations[0].as<ValueDict>();
    ASSERT_EQ(dict.size(), 39U);
    for (std::size_t i = 0; i < dict.size(); ++i) {
      EXPECT_EQ(dict[i].name, names[2 + i]);
      EXPECT_EQ(dict[i].value, stepped->observations[2 + i]) << dict[i].name;
    }
    // LLVM 19 puts its default decision in the callee_basic_block_count slot.
    auto slot = std::find(names.begin(), names.end(), "callee_basic_block_count");
    ASSERT_NE(slot, names.end());
    advice = stepped->observations[1].as<std::int64_t>();
    EXPECT_EQ(stepped->observations[slot - names.begin()].as<Int64Tensor>().values.at(0), advice);
    ++checked;
  }
  EXPECT_GT(checked, 2);
}

TEST(MlgoInteractiveSessionTest, RegallocEpisodeCompletesWithConsistentReward) {
  ClusterFixture fixture;
  for (const char* uri : {"generator://csmith-v0/3", "benchmark://kiln-bench-v0/matmul"}) {
    SCOPED_TRACE(uri);
    auto session = fixture.client->startSession(sessionOn("mlgo-regalloc", uri));
    ASSERT_TRUE(session.ok()) << session.status().toString();
    auto episode = playDefaultEpisode(**session);
    ASSERT_TRUE(episode.ok()) << episode.status().toString();
    EXPECT_GT(episode->nativeSize, 0);
    EXPECT_GT(episode->defaultNativeSize, 0);
    EXPECT_EQ(episode->reward, episode->defaultNativeSize - episode->nativeSize);
  }
}

TEST(MlgoInteractiveSessionTest, RegallocRefusesAMaskedCandidateWithoutEndingTheSession) {
  ClusterFixture fixture;
  client::SessionOptions options = sessionOn("mlgo-regalloc", "generator://csmith-v0/3");
  options.observations = {"mask", "DefaultAdvice"};
  auto session = fixture.client->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  const auto& mask = (*session)->initialObservations()[0].as<Int64Tensor>().values;
  auto masked = std::find(mask.begin(), mask.end(), 0);
  if (masked == mask.end()) GTEST_SKIP() << "every candidate is allowed at the first decision";
  auto refused =
      (*session)->step({Value(std::int64_t(masked - mask.begin()))}, std::vector<std::string>{});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("mask"), std::string::npos);
  auto accepted =
      (*session)->step({(*session)->initialObservations()[1]}, std::vector<std::string>{});
  EXPECT_TRUE(accepted.ok()) << accepted.status().toString();
}

TEST(MlgoInteractiveSessionTest, ForkReplaysTheDecisionsInANewCompiler) {
  ClusterFixture fixture;
  auto parent =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  ASSERT_TRUE(parent.ok()) << parent.status().toString();
  std::int64_t advice = (*parent)->initialObservations().front().as<std::int64_t>();
  for (int i = 0; i < 3; ++i) {
    auto stepped = (*parent)->step({Value(advice)}, std::vector<std::string>{"DefaultAdvice"});
    ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
    ASSERT_FALSE(stepped->endOfEpisode) << "the benchmark needs more than 3 decisions";
    advice = stepped->observations.front().as<std::int64_t>();
  }
  auto child = (*parent)->fork();
  ASSERT_TRUE(child.ok()) << child.status().toString();
  auto mine = (*parent)->step({}, std::vector<std::string>{"Decisions", "Features"});
  auto theirs = (*child)->step({}, std::vector<std::string>{"Decisions", "Features"});
  ASSERT_TRUE(mine.ok() && theirs.ok());
  EXPECT_EQ(theirs->observations[0].as<std::int64_t>(), 3);
  EXPECT_EQ(mine->observations[1], theirs->observations[1]);  // the same pending decision
  // Both continue independently to the default size.
  for (client::Session* session : {parent->get(), child->get()}) {
    bool ended = false;
    std::int64_t next = advice;
    for (int i = 0; i < 10000 && !ended; ++i) {
      auto stepped = session->step({Value(next)}, std::vector<std::string>{"DefaultAdvice"});
      ASSERT_TRUE(stepped.ok()) << stepped.status().toString();
      ended = stepped->endOfEpisode;
      next = stepped->observations.front().as<std::int64_t>();
    }
    auto figures = session->step({}, std::vector<std::string>{"NativeSize", "DefaultNativeSize"});
    ASSERT_TRUE(figures.ok());
    EXPECT_EQ(figures->observations[0], figures->observations[1]);
  }
}

struct BadCompiler {
  const char* mode;
  const char* expected;  // a piece of the error message
};

TEST(MlgoInteractiveSessionTest, MisbehavingCompilersEndTheSessionWithAClearError) {
  ClusterFixture fixture;
  ASSERT_TRUE(
      fixture.client->workerParameter(fixture.worker(), "mlgo.decision_timeout_ms", "500").ok());
  const BadCompiler cases[] = {
      {"exit-early", "cannot read its input"},
      {"hang-before-open", "hung"},
      {"hang-after-header", "hung"},
      {"garbage-header", "header"},
      {"wrong-header", "surprise_feature"},
      {"crash-mid-record", "crashed in the middle"},
      {"garbage-record", "mlgo-inline failed"},
  };
  for (const BadCompiler& bad : cases) {
    SCOPED_TRACE(bad.mode);
    fixture.useOpt(fixture.fakeOpt(bad.mode));
    auto session =
        fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
    Status status = session.ok() ? okStatus() : session.status();
    if (session.ok()) {
      // Failures after the first decision show up at the step that reaches them.
      for (int i = 0; i < 5 && status.ok(); ++i) {
        auto stepped = (*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{});
        status = stepped.ok() ? okStatus() : stepped.status();
      }
    }
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.code(), ErrorCode::kCompileError) << status.toString();
    EXPECT_NE(status.message().find(bad.expected), std::string::npos) << status.toString();
  }
  // A good fake still works on the same worker afterwards.
  fixture.useOpt(fixture.fakeOpt("good"));
  auto session =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  ASSERT_TRUE(session.ok()) << session.status().toString();
}

// Issue 48: opt-19 and llc-19 assemble a module's own assembly with the
// worker's rights; a module with `.include` of a host file got its lines
// back in the compile error, in mlgo-inline and mlgo-regalloc alike.
TEST(MlgoInteractiveSessionTest, ModulesThatReachForHostFilesAreRefused) {
  ClusterFixture fixture;
  const std::filesystem::path secretFile = fixture.temp.path() / "secret.s";
  const std::string secret = "kiln_secret_line_9c2e must never reach a client";
  std::ofstream(secretFile) << secret << "\n";
  const std::string program =
      "target triple = \"x86_64-unknown-linux-gnu\"\nmodule asm "
      "\".include \\22" +
      secretFile.string() + "\\22\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  for (const char* type : {"mlgo-inline", "mlgo-regalloc"}) {
    SCOPED_TRACE(type);
    auto options = sessionOn(type, "inline://hostile/include");
    options.program = program;
    auto session = fixture.client->startSession(options);
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument) << session.status().toString();
    EXPECT_NE(session.status().message().find(".include reads host files"), std::string::npos)
        << session.status().toString();
    EXPECT_EQ(session.status().message().find(secret), std::string::npos);
  }
}

TEST(MlgoInteractiveSessionTest, CompilerOverItsMemoryLimitEndsOnlyItsSession) {
  // The worker's --compile-memory-mb reaches the compiler children as RLIMIT_AS.
  ClusterFixture fixture(2, std::uint64_t{256} << 20);
  fixture.useOpt(fixture.fakeOpt("good"));
  auto bystander =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  ASSERT_TRUE(bystander.ok()) << bystander.status().toString();
  ASSERT_TRUE((*bystander)->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok());

  fixture.useOpt(fixture.fakeOpt("memory-hog"));
  auto hog =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  Status status = hog.ok() ? okStatus() : hog.status();
  for (int i = 0; i < 5 && status.ok(); ++i) {
    auto stepped = (*hog)->step({Value(std::int64_t{1})}, std::vector<std::string>{});
    status = stepped.ok() ? okStatus() : stepped.status();
  }
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ErrorCode::kCompileError) << status.toString();
  EXPECT_NE(status.message().find("MemoryError"), std::string::npos) << status.toString();
  EXPECT_NE(status.message().find("address-space limit of 256 MiB"), std::string::npos)
      << status.toString();

  // The other session, on its own compiler, keeps stepping.
  auto stepped = (*bystander)->step({Value(std::int64_t{0})}, std::vector<std::string>{});
  EXPECT_TRUE(stepped.ok()) << stepped.status().toString();
}

TEST(MlgoInteractiveSessionTest, BadParametersAreRefused) {
  ClusterFixture fixture;
  for (auto [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"mlgo.decision_timeout_ms", "-5"},
           {"mlgo.decision_timeout_ms", "12abc"},
           {"mlgo.compile_timeout_ms", "99999999999"}}) {
    auto reply = fixture.client->workerParameter(fixture.worker(), key, value);
    ASSERT_FALSE(reply.ok()) << key << "=" << value;
    EXPECT_EQ(reply.status().code(), ErrorCode::kInvalidArgument);
  }
  auto unknown = fixture.client->workerParameter(fixture.worker(), "mlgo.nonsense", "1");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  auto missing = fixture.client->startSession(
      sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/no_such_program"));
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound) << missing.status().toString();
}

// The exploit this closes: a client that could set mlgo.opt made the worker
// run any program it named with the next mlgo-inline session.
TEST(MlgoInteractiveSessionTest, AClientCannotChooseTheCompilerTheWorkerRuns) {
  mlgo_channel::testing::TempDir scripts;
  // Each script leaves a marker in its working directory, the session's: a
  // compiler runs confined and may write nowhere else (file_confinement.h).
  auto writeScript = [&](const std::string& name, const std::string& marker) {
    std::filesystem::path script = scripts.path() / name;
    std::ofstream(script) << "#!/bin/sh\ntouch '" << marker << "'\nexec opt-19 \"$@\"\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    return script.string();
  };
  const std::string clientProgram = writeScript("client-opt", "client-program-ran");
  OperatorSettings settings;
  settings.mlgoOpt = writeScript("operator-opt", "operator-program-ran");
  ClusterFixture fixture(2, HostLimits{}.compileMemoryBytes, settings);
  auto markerLeft = [&](const std::string& marker) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(fixture.temp.path() / "work", ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename() == marker) return true;
    }
    return false;
  };

  for (const char* key : {"mlgo.opt", "mlgo.llc"}) {
    auto refused = fixture.client->workerParameter(fixture.worker(), key, clientProgram);
    ASSERT_FALSE(refused.ok()) << key;
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied) << refused.status().toString();
    EXPECT_NE(refused.status().message().find(key == std::string("mlgo.opt") ? "--mlgo-opt"
                                                                             : "--mlgo-llc"),
              std::string::npos)
        << refused.status().toString();
  }
  auto session =
      fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
  ASSERT_TRUE(session.ok()) << session.status().toString();
  // The session's directory lives as long as the session.
  EXPECT_TRUE(markerLeft("operator-program-ran")) << "the operator's opt did not run";
  auto episode = playDefaultEpisode(**session);
  ASSERT_TRUE(episode.ok()) << episode.status().toString();
  EXPECT_GT(episode->decisions, 0);
  EXPECT_FALSE(markerLeft("client-program-ran")) << "the client's program ran";
}

// The mlgo time limits are the operator's ceilings: a client may lower them
// (and raise them back), never raise them above.
TEST(MlgoInteractiveSessionTest, AClientMayOnlyLowerTheCompilerTimeLimits) {
  OperatorSettings settings;
  settings.mlgoDecisionTimeout = std::chrono::milliseconds(2000);
  settings.mlgoCompileTimeout = std::chrono::milliseconds(5000);
  ClusterFixture fixture(2, HostLimits{}.compileMemoryBytes, settings);
  auto set = [&](const std::string& key, const std::string& value) {
    return fixture.client->workerParameter(fixture.worker(), key, value);
  };
  EXPECT_EQ(*set("mlgo.decision_timeout_ms", "500"), "500");
  EXPECT_EQ(*set("mlgo.decision_timeout_ms", "2000"), "2000");
  EXPECT_EQ(*set("mlgo.compile_timeout_ms", "5000"), "5000");
  for (auto [key, value, flag] : std::vector<std::array<std::string, 3>>{
           {"mlgo.decision_timeout_ms", "2001", "--mlgo-decision-timeout-ms"},
           {"mlgo.compile_timeout_ms", "3600000", "--mlgo-compile-timeout-ms"}}) {
    auto raised = set(key, value);
    ASSERT_FALSE(raised.ok()) << key;
    EXPECT_EQ(raised.status().code(), ErrorCode::kPermissionDenied) << raised.status().toString();
    EXPECT_NE(raised.status().message().find(flag), std::string::npos)
        << raised.status().toString();
  }
  const ReadySessionType* type = fixture.cluster->sessionTypes(0)->find("mlgo-inline");
  ASSERT_NE(type, nullptr);
  MlgoConfig config = static_cast<MlgoContext&>(*type->context).config();
  EXPECT_EQ(config.decisionTimeout, std::chrono::milliseconds(2000));
  EXPECT_EQ(config.compileTimeout, std::chrono::milliseconds(5000));
}

TEST(MlgoInteractiveSessionTest, HundredSessionsLeaveNoProcessAndNoFile) {
  ClusterFixture fixture;
  ASSERT_TRUE(
      fixture.client->workerParameter(fixture.worker(), "mlgo.decision_timeout_ms", "300").ok());
  const std::string real = "opt-19";
  const std::string modes[] = {"exit-early", "crash-mid-record", "hang-after-header",
                               "garbage-record"};
  auto start = std::chrono::steady_clock::now();
  int started = 0;
  for (int i = 0; i < 100 && std::chrono::steady_clock::now() - start < 100s; ++i) {
    bool good = i % 2 == 0;
    std::string opt = good ? real : fixture.fakeOpt(modes[(i / 2) % 4]);
    fixture.useOpt(opt);
    auto session =
        fixture.client->startSession(sessionOn("mlgo-inline", "benchmark://kiln-bench-v0/huffman"));
    ++started;
    if (!session.ok()) continue;
    // Leave real compilers mid-episode: ending the session must kill them.
    (void)(*session)->step({Value(std::int64_t{1})}, std::vector<std::string>{});
    if (i % 4 == 0) (void)(*session)->end();
    // Otherwise the Session's destructor ends it without waiting.
  }
  EXPECT_EQ(started, 100);
  EXPECT_TRUE(testsupport::waitUntil([] { return noChildProcesses(); }, std::chrono::seconds(5)))
      << "a compiler was left behind";
  EXPECT_TRUE(
      testsupport::waitUntil([&] { return fixture.leftoverFiles() == 0; }, std::chrono::seconds(5)))
      << fixture.leftoverFiles() << " files left in the worker's directory";
}

// The live opt-19 processes this test process started (the cluster's
// worker runs in it): their parent is this process, their name opt-19.
std::size_t optChildren() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, the last ')' ends it.
    const std::size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    pid_t parent = 0;
    rest >> state >> parent;
    const std::string comm = line.substr(open + 1, close - open - 1);
    if (parent == ::getpid() && state != 'Z' && comm == "opt-19") ++count;
  }
  return count;
}

// Issue 48: 40 mlgo-inline sessions were 40 opt-19 processes. End to end
// with the real opt-19: each session is one opt process of the worker; a
// client's session past --max-compilers-per-client is refused naming it and
// starts none, another client is still served, and an ended session gives
// its place back.
TEST(MlgoInteractiveSessionTest, RealCompilerProcessesAreBoundedPerClient) {
  HostLimits limits;
  limits.maxCompilersPerClient = 2;
  ClusterFixture fixture(2, HostLimits{}.compileMemoryBytes, {}, limits);
  ASSERT_EQ(optChildren(), 0u);
  const std::string uri = "benchmark://kiln-bench-v0/huffman";
  auto first = fixture.client->startSession(sessionOn("mlgo-inline", uri));
  ASSERT_TRUE(first.ok()) << first.status().toString();
  auto second = fixture.client->startSession(sessionOn("mlgo-inline", uri));
  ASSERT_TRUE(second.ok()) << second.status().toString();
  EXPECT_TRUE(testsupport::waitUntil([] { return optChildren() == 2; }, 10s)) << optChildren();
  auto third = fixture.client->startSession(sessionOn("mlgo-inline", uri));
  ASSERT_FALSE(third.ok()) << "a third compiler process was started for one client";
  EXPECT_EQ(third.status().code(), ErrorCode::kOverloaded) << third.status().toString();
  EXPECT_NE(third.status().message().find("--max-compilers-per-client"), std::string::npos)
      << third.status().toString();
  EXPECT_EQ(optChildren(), 2u);
  // Another client has its own share.
  client::ClientOptions otherOptions;
  otherOptions.coordinator = fixture.cluster->coordinatorEndpoint();
  otherOptions.requestTimeout = 60s;
  auto other = client::Client::connect(otherOptions);
  ASSERT_TRUE(other.ok()) << other.status().toString();
  auto theirs = (*other)->startSession(sessionOn("mlgo-inline", uri));
  ASSERT_TRUE(theirs.ok()) << theirs.status().toString();
  EXPECT_TRUE(testsupport::waitUntil([] { return optChildren() == 3; }, 10s)) << optChildren();
  // Ending one gives its place back, and its process goes.
  ASSERT_TRUE((*first)->end().ok());
  EXPECT_TRUE(testsupport::waitUntil([] { return optChildren() == 2; }, 10s)) << optChildren();
  auto again = fixture.client->startSession(sessionOn("mlgo-inline", uri));
  ASSERT_TRUE(again.ok()) << again.status().toString();
  EXPECT_TRUE((*again)->step({Value(std::int64_t{0})}, std::vector<std::string>{}).ok());
}

}  // namespace
}  // namespace kiln::mlgo_session::testing
