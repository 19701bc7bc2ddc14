// `kiln tools serve`'s service on the real agent tools: an executor on an
// embedded cluster with llvm sessions, reached over HTTP on 127.0.0.1 as a
// remote trainer reaches it. The schema it serves, a stateless call, a
// batch, an episode that only its caller can continue, and a tool error.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "tools/agent_tools/tool_executor.h"
#include "tools/agent_tools/tool_schema.h"
#include "tools/tools_service/tools_http_service.h"

namespace kiln::tools_service {
namespace {

using nlohmann::json;

constexpr const char* kCrc32 = "benchmark://kiln-bench-v0/crc32";
constexpr const char* kKeyA = "key-of-a-0123456789abcdef";
constexpr const char* kKeyB = "key-of-b-0123456789abcdef";

class ExecutorServiceTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto executor = agent_tools::ToolExecutor::create({});
    ASSERT_TRUE(executor.ok()) << executor.status().toString();
    executor_ = std::move(*executor);
    backend_ = executorBackend(*executor_);
    auto keys = ApiKeys::parse(fmt::format("{} trainer-a\n{} trainer-b\n", kKeyA, kKeyB), "test");
    ASSERT_TRUE(keys.ok());
    auto service = ToolsHttpService::create({}, std::move(*keys), *backend_, nullptr);
    ASSERT_TRUE(service.ok()) << service.status().toString();
    service_ = std::move(*service);
    ASSERT_TRUE(service_->start().ok());
  }
  static void TearDownTestSuite() {
    service_.reset();
    backend_.reset();
    executor_.reset();
  }
  void SetUp() override { ASSERT_NE(service_, nullptr); }

  static std::pair<int, json> post(const char* key, const std::string& path, const json& body) {
    httplib::Client c("127.0.0.1", service_->port());
    c.set_read_timeout(120);
    c.set_bearer_token_auth(key);
    auto res = c.Post(path, body.dump(), "application/json");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  static json apply(const std::vector<std::string>& passes, json extra = json::object()) {
    json arguments = {{"benchmark", kCrc32}, {"passes", passes}};
    arguments.update(extra);
    return {{"name", "apply_passes"}, {"arguments", arguments}};
  }

  static inline std::unique_ptr<agent_tools::ToolExecutor> executor_;
  static inline std::unique_ptr<ToolBackend> backend_;
  static inline std::unique_ptr<ToolsHttpService> service_;
};

TEST_F(ExecutorServiceTest, ServesTheExecutorsSchema) {
  httplib::Client c("127.0.0.1", service_->port());
  c.set_bearer_token_auth(kKeyA);
  auto res = c.Get("/v1/tools");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json tools = json::parse(res->body);
  ASSERT_TRUE(tools.is_array());
  std::vector<std::string> names;
  for (const json& tool : tools) names.push_back(tool["function"]["name"]);
  EXPECT_EQ(names, agent_tools::toolNames());
}

TEST_F(ExecutorServiceTest, ACallAndABatchAnswerInstructionCounts) {
  auto [status, answer] = post(kKeyA, "/v1/tools/call", apply({"mem2reg"}));
  ASSERT_EQ(status, 200) << answer.dump();
  const auto before = answer["instruction_count"]["before"].get<std::int64_t>();
  const auto after = answer["instruction_count"]["after"].get<std::int64_t>();
  EXPECT_LT(after, before);
  auto [batchStatus, answers] =
      post(kKeyA, "/v1/tools/batch",
           json::array(
               {apply({"mem2reg"}), apply({"mem2reg", "instcombine"}), apply({"no-such-pass"})}));
  ASSERT_EQ(batchStatus, 200) << answers.dump();
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[0]["instruction_count"]["after"], after);
  EXPECT_LE(answers[1]["instruction_count"]["after"].get<std::int64_t>(), after);
  EXPECT_EQ(answers[2]["error"]["code"], "unknown_pass") << answers[2].dump();
}

TEST_F(ExecutorServiceTest, AnEpisodeIsUnknownToAnotherCaller) {
  auto [status, started] =
      post(kKeyA, "/v1/tools/call", apply({"mem2reg"}, {{"keep_episode", true}}));
  ASSERT_EQ(status, 200) << started.dump();
  const std::string episode = started["episode"];
  ASSERT_FALSE(episode.empty());
  const json next = {{"name", "apply_passes"},
                     {"arguments", {{"episode", episode}, {"passes", {"instcombine"}}}}};
  auto [theirs, refused] = post(kKeyB, "/v1/tools/call", next);
  EXPECT_EQ(theirs, 400);
  EXPECT_EQ(refused["error"]["code"], "unknown_episode") << refused.dump();
  auto [mine, continued] = post(kKeyA, "/v1/tools/call", next);
  EXPECT_EQ(mine, 200) << continued.dump();
  EXPECT_EQ(post(kKeyA, "/v1/tools/call",
                 {{"name", "end_episode"}, {"arguments", {{"episode", episode}}}})
                .first,
            200);
}

}  // namespace
}  // namespace kiln::tools_service
