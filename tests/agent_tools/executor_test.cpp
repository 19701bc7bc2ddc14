// The agent tools' executor on an embedded cluster with real llvm sessions:
// stateless calls and their prefix reuse, episodes, the tools' answers, and
// bad input (malformed JSON, unknown tools and passes, oversized and hostile
// modules, quotas), each a JSON error with its code that leaves other
// callers' calls as they were.
#include "tools/agent_tools/tool_executor.h"

#include "tools/local_cluster/local_cluster.h"

#include <gtest/gtest.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace kiln::agent_tools {
namespace {

using nlohmann::json;

constexpr const char* kCrc32 = "benchmark://kiln-bench-v0/crc32";

std::unique_ptr<ToolExecutor> startExecutor(ToolLimits limits = {}) {
  ExecutorOptions options;
  options.limits = limits;
  auto executor = ToolExecutor::create(options);
  EXPECT_TRUE(executor.ok()) << executor.status().toString();
  return executor.ok() ? std::move(*executor) : nullptr;
}

json call(ToolExecutor& executor, const CallerId& caller, const char* tool, const json& arguments) {
  return json::parse(executor.call(caller, tool, arguments.dump()));
}

// The code of an error answer; "" for a result.
std::string codeOf(const json& answer) {
  return answer.contains("error") ? answer["error"]["code"].get<std::string>() : "";
}

json applied(ToolExecutor& executor, const CallerId& caller, const std::vector<std::string>& passes,
             json extra = json::object()) {
  json arguments = {{"benchmark", kCrc32}, {"passes", passes}};
  arguments.update(extra);
  json answer = call(executor, caller, "apply_passes", arguments);
  EXPECT_EQ(codeOf(answer), "") << answer.dump();
  return answer;
}

class AgentToolsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { executor_ = startExecutor().release(); }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(executor_, nullptr); }
  static ToolExecutor* executor_;
};
ToolExecutor* AgentToolsTest::executor_ = nullptr;

TEST_F(AgentToolsTest, AStatelessCallWhosePrefixWasSeenRunsOnlyItsNewPasses) {
  ToolExecutor& tools = *executor_;
  const json first = applied(tools, "prefix", {"sroa", "instcombine"});
  EXPECT_EQ(first["passes_reused"], 0);
  EXPECT_EQ(first["episode"], nullptr);
  EXPECT_LT(first["instruction_count"]["after"], first["instruction_count"]["before"]);

  const ExecutorStats before = tools.stats();
  const json longer = applied(tools, "prefix", {"sroa", "instcombine", "simplifycfg"},
                              {{"observe", {"Autophase", "IrInstructionCount"}}});
  const ExecutorStats after = tools.stats();
  EXPECT_EQ(longer["passes_reused"], 2);
  EXPECT_EQ(longer["passes_applied"], 3);
  EXPECT_EQ(after.passesApplied - before.passesApplied, 1u);
  EXPECT_EQ(after.prefixHits - before.prefixHits, 1u);
  EXPECT_EQ(after.sessionsStarted, before.sessionsStarted);
  EXPECT_EQ(longer["observations"]["Autophase"].size(), 56u);
  EXPECT_EQ(longer["observations"]["IrInstructionCount"], longer["instruction_count"]["after"]);

  // The same list from scratch (another caller: another cache) ends in the same state.
  const json fresh = applied(tools, "prefix-fresh", {"sroa", "instcombine", "simplifycfg"},
                             {{"observe", {"IrSha1"}}});
  EXPECT_EQ(fresh["passes_reused"], 0);
  EXPECT_EQ(fresh["instruction_count"], longer["instruction_count"]);
}

TEST_F(AgentToolsTest, EpisodesContinueForkAndEndAndBelongToTheirCaller) {
  ToolExecutor& tools = *executor_;
  const json opened = applied(tools, "episodes", {"sroa"}, {{"keep_episode", true}});
  const std::string episode = opened["episode"];
  ASSERT_FALSE(episode.empty());

  const json forked = call(tools, "episodes", "fork_episode", {{"episode", episode}});
  const std::string copy = forked["episode"];
  ASSERT_NE(copy, episode);

  const json moved = call(tools, "episodes", "apply_passes",
                          {{"episode", episode}, {"passes", {"instcombine", "simplifycfg"}}});
  EXPECT_EQ(moved["episode"], episode);
  EXPECT_EQ(moved["benchmark"], kCrc32);
  EXPECT_EQ(moved["instruction_count"]["before"], opened["instruction_count"]["after"]);
  // The fork did not move.
  const json copyCount =
      call(tools, "episodes", "observe", {{"episode", copy}, {"observe", {"IrInstructionCount"}}});
  EXPECT_EQ(copyCount["observations"]["IrInstructionCount"], opened["instruction_count"]["after"]);

  // Another caller cannot use (or learn of) the handle.
  const json stolen = call(tools, "intruder", "observe",
                           {{"episode", episode}, {"observe", {"IrInstructionCount"}}});
  EXPECT_EQ(codeOf(stolen), "unknown_episode") << stolen.dump();
  EXPECT_EQ(codeOf(call(tools, "intruder", "end_episode", {{"episode", episode}})),
            "unknown_episode");

  EXPECT_EQ(call(tools, "episodes", "end_episode", {{"episode", episode}})["ended"], true);
  EXPECT_EQ(codeOf(call(tools, "episodes", "end_episode", {{"episode", episode}})),
            "unknown_episode");
  EXPECT_EQ(call(tools, "episodes", "end_episode", {{"episode", copy}})["ended"], true);
}

TEST_F(AgentToolsTest, IrTextIsTrimmedToItsBudgetAndSaysWhatWasCut) {
  const json whole =
      call(*executor_, "ir", "ir_text", {{"benchmark", kCrc32}, {"max_bytes", 1 << 20}});
  ASSERT_EQ(codeOf(whole), "") << whole.dump();
  EXPECT_FALSE(whole["trimmed"]);
  const std::uint64_t total = whole["bytes_total"];
  const json cut = call(*executor_, "ir", "ir_text",
                        {{"benchmark", kCrc32}, {"passes", {"sroa"}}, {"max_bytes", 400}});
  ASSERT_EQ(codeOf(cut), "") << cut.dump();
  EXPECT_TRUE(cut["trimmed"]);
  EXPECT_LE(cut["text"].get<std::string>().size(), 400u) << cut.dump();
  EXPECT_EQ(cut["bytes_shown"], cut["text"].get<std::string>().size());
  EXPECT_FALSE(cut["functions_cut"].empty());
  EXPECT_NE(cut["note"].get<std::string>().find("showing"), std::string::npos);
  EXPECT_NE(cut["bytes_total"], total);  // sroa changed the module
}

TEST_F(AgentToolsTest, BaselinesAndValidationAnswerForAStateAfterPasses) {
  const json state = {{"benchmark", kCrc32}, {"passes", {"sroa", "instcombine"}}};
  const json baselines = call(*executor_, "judge", "compare_baselines", state);
  ASSERT_EQ(codeOf(baselines), "") << baselines.dump();
  EXPECT_GT(baselines["O0"], baselines["Oz"]);
  EXPECT_NEAR(baselines["ratio_to_Oz"].get<double>(),
              baselines["instruction_count"].get<double>() / baselines["Oz"].get<double>(), 1e-9);
  const json verdict = call(*executor_, "judge", "validate", state);
  ASSERT_EQ(codeOf(verdict), "") << verdict.dump();
  EXPECT_EQ(verdict["verdict"], "valid") << verdict.dump();
  EXPECT_GT(verdict["inputs"], 0);
}

TEST_F(AgentToolsTest, ACallersOwnModuleIsCompiledAsItsOwn) {
  const std::string module =
      "define i32 @main() {\n  %p = alloca i32\n  store i32 7, ptr %p\n"
      "  %v = load i32, ptr %p\n  ret i32 %v\n}\n";
  const json answer =
      call(*executor_, "module", "apply_passes", {{"module", module}, {"passes", {"mem2reg"}}});
  ASSERT_EQ(codeOf(answer), "") << answer.dump();
  EXPECT_EQ(answer["instruction_count"]["before"], 4);
  EXPECT_EQ(answer["instruction_count"]["after"], 1);
  EXPECT_TRUE(answer["benchmark"].get<std::string>().starts_with("benchmark://user-v0/"));
}

TEST_F(AgentToolsTest, BadInputIsAJsonErrorWithItsCodeAndOtherCallersAreUnaffected) {
  ToolExecutor& tools = *executor_;
  const std::string main = "define i32 @main() {\n  ret i32 0\n}\n";
  const std::string hostile = "module asm \".incbin \\22/etc/passwd\\22\"\n" + main;
  ToolLimits limits = tools.limits();
  struct Case {
    std::string tool, arguments, code, mentions;
  };
  const std::vector<Case> cases = {
      {"apply_passes", "{\"benchmark\": ", "invalid_json", "apply_passes"},
      {"apply_pases", "{}", "unknown_tool", "apply_passes"},
      {"apply_passes", json{{"benchmark", kCrc32}, {"passes", {"sroa", "instcombin"}}}.dump(),
       "unknown_pass", "instcombine"},
      {"apply_passes",
       json{{"module", std::string(limits.maxModuleBytes + 1, ' ')}, {"passes", json::array()}}
           .dump(),
       "too_large", "maxModuleBytes"},
      {"apply_passes", json{{"module", hostile}, {"passes", json::array()}}.dump(),
       "invalid_module", "kiln refuses it"},
      // A huge allocation: a terabyte of constant data the code generator would write.
      {"apply_passes",
       json{{"module", "@g = constant [1099511627776 x i8] zeroinitializer\n" + main},
            {"passes", json::array()}}
           .dump(),
       "invalid_module", "--max-module-data-bytes"},
      {"apply_passes", json{{"module", "not IR at all"}, {"passes", json::array()}}.dump(),
       "invalid_module", "not valid LLVM IR"},
      {"apply_passes",
       json{{"benchmark", "benchmark://kiln-bench-v0/no-such"}, {"passes", json::array()}}.dump(),
       "invalid_arguments", "no-such"},
      {"observe", json{{"episode", "ep-999999"}, {"observe", {"IrInstructionCount"}}}.dump(),
       "unknown_episode", "ep-999999"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.tool + " " + c.arguments.substr(0, 200));
    const json answer = json::parse(tools.call("bad", c.tool, c.arguments));
    EXPECT_EQ(codeOf(answer), c.code) << answer.dump();
    const std::string message = answer["error"].value("message", "");
    EXPECT_NE(message.find(c.mentions), std::string::npos) << message;
    EXPECT_EQ(message.find("root:"), std::string::npos) << "the module's file leaked: " << message;
  }
  // The bad caller and another both go on.
  applied(tools, "bad", {"sroa"});
  applied(tools, "good", {"sroa", "gvn"});
}

// Concurrent rollouts of one caller on one benchmark, each extending its own
// pass list a pass a call, start each call from their own last state: the
// call goes to the lane caching its longest prefix (lane_choice.h), not to
// whichever lane is free first (where it would find only the shared first
// pass). Each turn's calls are released together by a barrier.
TEST_F(AgentToolsTest, ConcurrentRolloutsStartFromTheirOwnCachedPrefix) {
  ToolExecutor& tools = *executor_;
  const std::vector<std::string> extensions = {"gvn",  "instcombine", "simplifycfg", "early-cse",
                                               "dse",  "adce",        "sccp",        "reassociate",
                                               "licm", "mem2reg"};
  constexpr std::size_t kRollouts = 4;
  constexpr std::size_t kTurns = 6;
  std::vector<std::vector<std::size_t>> reused(kRollouts);
  std::barrier turn(kRollouts);
  {
    std::vector<std::jthread> rollouts;
    for (std::size_t r = 0; r < kRollouts; ++r) {
      rollouts.emplace_back([&, r] {
        std::vector<std::string> passes = {"sroa"};  // the prefix every rollout shares
        for (std::size_t t = 0; t < kTurns; ++t) {
          if (t > 0) passes.push_back(extensions[(r * 2 + t) % extensions.size()]);
          turn.arrive_and_wait();
          const json answer = applied(tools, "rollouts", passes);
          reused[r].push_back(answer.value("passes_reused", std::size_t{0}));
        }
      });
    }
  }
  std::size_t fromOwnState = 0;
  for (std::size_t r = 0; r < kRollouts; ++r) {
    ASSERT_EQ(reused[r].size(), kTurns);
    for (std::size_t t = 1; t < kTurns; ++t) fromOwnState += reused[r][t] == t ? 1 : 0;
  }
  // A first turn whose calls happen to meet on one lane costs a turn later;
  // lanes taken at random would give about a quarter.
  EXPECT_GE(fromOwnState, kRollouts * (kTurns - 1) * 3 / 4)
      << "of " << kRollouts * (kTurns - 1) << " calls after the first turn";
}

TEST_F(AgentToolsTest, ABatchAnswersEveryCallInOrder) {
  std::vector<ToolCall> calls;
  for (const char* pass : {"sroa", "gvn", "instcombine", "simplifycfg"}) {
    calls.push_back(
        {"apply_passes", json{{"benchmark", kCrc32}, {"passes", {"mem2reg", pass}}}.dump()});
  }
  calls.push_back({"no_such_tool", "{}"});
  const std::vector<std::string> answers = executor_->callBatch("batch", calls);
  ASSERT_EQ(answers.size(), calls.size());
  for (std::size_t i = 0; i + 1 < calls.size(); ++i) {
    const json answer = json::parse(answers[i]);
    EXPECT_EQ(codeOf(answer), "") << answer.dump();
    EXPECT_EQ(answer["passes_applied"], 2);
  }
  EXPECT_EQ(codeOf(json::parse(answers.back())), "unknown_tool");
}

TEST(AgentToolsQuotas, EpisodesAndCallsInFlightAreBoundedPerCaller) {
  ToolLimits limits;
  limits.maxEpisodesPerCaller = 2;
  limits.maxConcurrentCallsPerCaller = 1;
  auto tools = startExecutor(limits);
  ASSERT_NE(tools, nullptr);
  const json keep = {{"keep_episode", true}};
  const std::string first = applied(*tools, "greedy", {"sroa"}, keep)["episode"];
  applied(*tools, "greedy", {"gvn"}, keep);
  const json third = call(*tools, "greedy", "apply_passes",
                          {{"benchmark", kCrc32}, {"passes", {"sroa"}}, {"keep_episode", true}});
  EXPECT_EQ(codeOf(third), "quota_exceeded") << third.dump();
  EXPECT_NE(third["error"]["message"].get<std::string>().find("maxEpisodesPerCaller"),
            std::string::npos);
  // Another caller has its own quota; ending an episode frees a place.
  applied(*tools, "modest", {"sroa"}, keep);
  call(*tools, "greedy", "end_episode", {{"episode", first}});
  applied(*tools, "greedy", {"sroa"}, keep);

  // Calls at once over the caller's limit of 1: some are refused, not queued.
  // Each round releases 6 calls together; bounded in rounds.
  bool refused = false;
  for (int round = 0; round < 10 && !refused; ++round) {
    std::vector<std::string> answers(6);
    std::latch go(6);
    {
      std::vector<std::jthread> threads;
      for (std::size_t i = 0; i < answers.size(); ++i) {
        threads.emplace_back([&, i] {
          go.arrive_and_wait();
          // validate runs the program: long enough for the calls to overlap.
          answers[i] = tools->call("burst", "validate", json{{"benchmark", kCrc32}}.dump());
        });
      }
    }
    for (const std::string& answer : answers) {
      const std::string code = codeOf(json::parse(answer));
      EXPECT_TRUE(code == "quota_exceeded" || code.empty()) << answer;
      refused = refused || code == "quota_exceeded";
    }
  }
  EXPECT_TRUE(refused) << "no call was ever over the limit";
  applied(*tools, "modest", {"gvn"});
}

// Two keep_episode calls at once with one place left: the check and the
// taking of the place are one step, so only one gets it. The hook holds a
// call that took its place until the other took one too (the race) or
// answered (refused), so the race is met every run.
TEST(AgentToolsQuotas, TwoCallsAtOnceCannotBothTakeTheLastEpisodePlace) {
  std::mutex mutex;
  std::condition_variable changed;
  int reserved = 0;
  int answered = 0;
  ExecutorOptions options;
  options.limits.maxEpisodesPerCaller = 1;
  options.limits.maxConcurrentCallsPerCaller = 2;
  options.afterEpisodeReserved = [&] {
    std::unique_lock lock(mutex);
    ++reserved;
    changed.notify_all();
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return reserved >= 2 || answered > 0; });
  };
  auto tools = ToolExecutor::create(options);
  ASSERT_TRUE(tools.ok()) << tools.status().toString();
  std::vector<json> answers(2);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      threads.emplace_back([&, i] {
        answers[i] = call(**tools, "racer", "apply_passes",
                          {{"benchmark", kCrc32}, {"passes", {"sroa"}}, {"keep_episode", true}});
        std::lock_guard lock(mutex);
        ++answered;
        changed.notify_all();
      });
    }
  }
  const int kept = (codeOf(answers[0]).empty() ? 1 : 0) + (codeOf(answers[1]).empty() ? 1 : 0);
  EXPECT_EQ(kept, 1) << answers[0].dump() << "\n" << answers[1].dump();
  EXPECT_TRUE(codeOf(answers[0]) == "quota_exceeded" || codeOf(answers[1]) == "quota_exceeded");
  EXPECT_EQ(reserved, 1);
}

// A worker refuses a client more live sessions than --max-sessions-per-client;
// the prefix cache then gives up its least recently used states instead of
// refusing every later call of the lane.
TEST(AgentToolsQuotas, ACacheOverTheWorkersSessionQuotaShedsItsOldestStates) {
  LocalClusterOptions local;
  local.worker.limits.maxSessionsPerClient = 6;
  auto cluster = LocalCluster::start(local);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(std::chrono::seconds(10)).ok());
  ExecutorOptions options;
  options.client.coordinator = (*cluster)->coordinatorEndpoint();
  options.limits.maxConcurrentCallsPerCaller = 1;  // one lane: one kiln client
  auto tools = ToolExecutor::create(options);
  ASSERT_TRUE(tools.ok()) << tools.status().toString();
  const std::vector<std::string> passes = {"sroa",        "gvn", "instcombine", "simplifycfg",
                                           "early-cse",   "dse", "adce",        "sccp",
                                           "reassociate", "licm"};
  for (const std::string& pass : passes) {
    applied(**tools, "shedding", {pass});
  }
  EXPECT_EQ((*tools)->stats().errors, 0u);
}

}  // namespace
}  // namespace kiln::agent_tools
