// `kiln tools serve`'s HTTP service end to end on 127.0.0.1 (an ephemeral
// port) with a scripted backend: the schema, a call, a batch run
// concurrently, keys (missing, wrong, two callers kept apart), a body over
// the limit, malformed JSON, 429 on each quota, unknown endpoints, and one
// caller's bad input next to another's calls. Every error is JSON with a code.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "tests/support/wait.h"
#include "tools/tools_service/tool_requests.h"
#include "tools/tools_service/tools_http_service.h"

namespace kiln::tools_service {
namespace {

using nlohmann::json;
using testsupport::waitUntil;

constexpr const char* kKeyA = "key-of-a-0123456789abcdef";
constexpr const char* kKeyB = "key-of-b-0123456789abcdef";
constexpr const char* kKeyTight = "key-of-tight-0123456789ab";
constexpr const char* kKeySlow = "key-of-slow-0123456789abc";

// Tools: echo (the caller and arguments back), start/step (episodes kept per
// caller, as the executor keeps them), wait (holds until released, to have
// calls in flight), error (an invalid_arguments answer).
class ScriptedBackend final : public ToolBackend {
 public:
  std::string schemaJson(bool results) const override {
    return results ? R"({"echo":{"type":"object"}})"
                   : R"([{"type":"function","function":{"name":"echo"}}])";
  }

  std::string call(const std::string& caller, std::string_view tool,
                   std::string_view arguments) override {
    if (tool == "echo") {
      return json{{"caller", caller}, {"arguments", json::parse(arguments)}}.dump();
    }
    if (tool == "start") {
      std::lock_guard lock(mutex_);
      std::string handle = fmt::format("ep-{}", nextEpisode_++);
      episodes_[caller].insert(handle);
      return json{{"episode", handle}}.dump();
    }
    if (tool == "step") {
      const std::string handle = json::parse(arguments).value("episode", "");
      std::lock_guard lock(mutex_);
      if (episodes_[caller].count(handle) == 0) {
        return errorBody("unknown_episode", fmt::format("no episode {} of yours", handle));
      }
      return json{{"episode", handle}, {"stepped", true}}.dump();
    }
    if (tool == "wait") {
      std::unique_lock lock(mutex_);
      ++waiting_;
      changed_.notify_all();
      changed_.wait_for(lock, std::chrono::seconds(10), [&] { return released_; });
      --waiting_;
      return R"({"waited":true})";
    }
    return errorBody("unknown_tool", fmt::format("no tool {}", tool));
  }

  int waiting() {
    std::lock_guard lock(mutex_);
    return waiting_;
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::set<std::string>> episodes_;
  int nextEpisode_ = 0;
  int waiting_ = 0;
  bool released_ = false;
};

class ToolsHttpServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ToolsServiceOptions options;
    options.maxBodyBytes = 4096;
    start(options);
  }
  void TearDown() override {
    backend_.release();
    if (service_) service_->stop();
  }

  void start(ToolsServiceOptions options) {
    if (service_) service_->stop();
    auto keys = ApiKeys::parse(fmt::format("{} trainer-a\n{} trainer-b\n{} tight concurrent=1 "
                                           "batch=2\n{} slow rate=0.01\n",
                                           kKeyA, kKeyB, kKeyTight, kKeySlow),
                               "test");
    ASSERT_TRUE(keys.ok()) << keys.status().toString();
    auto service = ToolsHttpService::create(options, std::move(*keys), backend_, nullptr);
    ASSERT_TRUE(service.ok()) << service.status().toString();
    service_ = std::move(*service);
    auto port = service_->start();
    ASSERT_TRUE(port.ok()) << port.status().toString();
    port_ = *port;
  }

  httplib::Client client(const std::string& key) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(5);
    c.set_read_timeout(20);
    if (!key.empty()) c.set_bearer_token_auth(key);
    return c;
  }

  // POSTs `body` and returns the status and the parsed JSON answer.
  std::pair<int, json> post(const std::string& key, const std::string& path,
                            const std::string& body) const {
    auto c = client(key);
    auto res = c.Post(path, body, "application/json");
    if (!res) return {0, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  static std::string errorCode(const json& answer) {
    if (!answer.is_object() || !answer.contains("error"))
      return "(no error: " + answer.dump() + ")";
    return answer["error"].value("code", "(no code)");
  }

  ScriptedBackend backend_;
  std::unique_ptr<ToolsHttpService> service_;
  int port_ = 0;
};

TEST_F(ToolsHttpServiceTest, ServesTheToolListAndTheAnswersSchemas) {
  auto c = client(kKeyA);
  auto tools = c.Get("/v1/tools");
  ASSERT_TRUE(tools);
  EXPECT_EQ(tools->status, 200);
  EXPECT_EQ(tools->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(tools->body)[0]["function"]["name"], "echo");
  auto results = c.Get("/v1/tools?results=1");
  ASSERT_TRUE(results);
  EXPECT_TRUE(json::parse(results->body).contains("echo"));
}

TEST_F(ToolsHttpServiceTest, ACallReachesTheBackendAsTheKeysCaller) {
  auto [status, answer] = post(kKeyA, "/v1/tools/call", R"({"name":"echo","arguments":{"x":1}})");
  EXPECT_EQ(status, 200);
  EXPECT_EQ(answer["caller"], "trainer-a");
  EXPECT_EQ(answer["arguments"]["x"], 1);
  // Arguments as JSON text, as OpenAI-style tool calls carry them.
  auto [status2, answer2] =
      post(kKeyB, "/v1/tools/call", R"({"name":"echo","arguments":"{\"y\":2}"})");
  EXPECT_EQ(status2, 200);
  EXPECT_EQ(answer2["caller"], "trainer-b");
  EXPECT_EQ(answer2["arguments"]["y"], 2);
}

TEST_F(ToolsHttpServiceTest, AToolErrorIsJsonWithItsCodeAndAMatchingStatus) {
  auto [status, answer] = post(kKeyA, "/v1/tools/call", R"({"name":"no_such_tool"})");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(errorCode(answer), "unknown_tool");
}

TEST_F(ToolsHttpServiceTest, ABatchRunsItsCallsConcurrentlyAndAnswersInOrder) {
  // Four waits answer only once all four are in flight at once: a batch run
  // one call after another would hold the first until the bound below.
  std::thread releaser([&] {
    if (waitUntil([&] { return backend_.waiting() == 4; }, std::chrono::seconds(10))) {
      backend_.release();
    }
  });
  auto [status, answers] = post(kKeyA, "/v1/tools/batch",
                                R"([{"name":"wait"},{"name":"wait"},{"name":"echo","arguments":
                                {"i":2}},{"name":"wait"},{"name":"wait"},{"name":"nope"}])");
  releaser.join();
  ASSERT_EQ(status, 200);
  ASSERT_TRUE(answers.is_array());
  ASSERT_EQ(answers.size(), 6u);
  EXPECT_EQ(answers[0]["waited"], true);
  EXPECT_EQ(answers[2]["arguments"]["i"], 2);
  EXPECT_EQ(answers[4]["waited"], true);
  EXPECT_EQ(errorCode(answers[5]), "unknown_tool");  // one bad call, the others answered
}

TEST_F(ToolsHttpServiceTest, AMissingOrUnknownKeyIs401WithJsonOnEveryEndpoint) {
  for (const std::string key : {"", "not-a-key-of-this-service"}) {
    for (const std::string path : {"/v1/tools/call", "/v1/tools/batch"}) {
      auto [status, answer] = post(key, path, R"({"name":"echo"})");
      EXPECT_EQ(status, 401) << path;
      EXPECT_EQ(errorCode(answer), "unauthorized") << path;
    }
    auto res = client(key).Get("/v1/tools");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
    EXPECT_EQ(errorCode(json::parse(res->body)), "unauthorized");
  }
  // The key must come as a bearer token, not in another scheme.
  httplib::Client basic("127.0.0.1", port_);
  basic.set_basic_auth("trainer-a", kKeyA);
  auto res = basic.Get("/v1/tools");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
}

TEST_F(ToolsHttpServiceTest, TwoCallersEpisodesAreTheirOwn) {
  auto [status, started] = post(kKeyA, "/v1/tools/call", R"({"name":"start"})");
  ASSERT_EQ(status, 200);
  const std::string step =
      json{{"name", "step"}, {"arguments", {{"episode", started["episode"]}}}}.dump();
  auto [mine, answer] = post(kKeyA, "/v1/tools/call", step);
  EXPECT_EQ(mine, 200);
  EXPECT_EQ(answer["stepped"], true);
  auto [theirs, refused] = post(kKeyB, "/v1/tools/call", step);
  EXPECT_EQ(theirs, 400);
  EXPECT_EQ(errorCode(refused), "unknown_episode");
}

TEST_F(ToolsHttpServiceTest, ABodyOverTheLimitIs413TooLargeAsJson) {
  const std::string big =
      json{{"name", "echo"}, {"arguments", {{"x", std::string(5000, 'x')}}}}.dump();
  for (const std::string path : {"/v1/tools/call", "/v1/tools/batch"}) {
    auto [status, answer] = post(kKeyA, path, big);
    EXPECT_EQ(status, 413) << path;
    EXPECT_EQ(errorCode(answer), "too_large") << path;
    EXPECT_NE(answer["error"]["message"].get<std::string>().find("--max-body-bytes"),
              std::string::npos);
  }
}

TEST_F(ToolsHttpServiceTest, ABodyIsJsonWhateverContentTypeItIsSentWith) {
  // curl -d and urllib send form-encoded bodies by default; httplib would
  // parse those as a form and refuse one over 8 KiB with its own 413.
  ToolsServiceOptions options;
  options.maxBodyBytes = 1 << 20;
  start(options);
  const std::string body =
      json{{"name", "echo"}, {"arguments", {{"x", std::string(20000, 'x')}}}}.dump();
  for (const char* type : {"application/x-www-form-urlencoded", "text/plain", "application/json"}) {
    auto c = client(kKeyA);
    auto res = c.Post("/v1/tools/call", body, type);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << type << ": " << res->body.substr(0, 300);
  }
}

TEST_F(ToolsHttpServiceTest, MalformedJsonAndMisshapenCallsAre400) {
  struct Case {
    std::string path, body, code;
  };
  const std::vector<Case> cases = {
      {"/v1/tools/call", "{\"name\": ", "invalid_json"},
      {"/v1/tools/call", "", "invalid_json"},
      {"/v1/tools/batch", "[{\"name\":\"echo\"}", "invalid_json"},
      {"/v1/tools/call", "[]", "invalid_arguments"},
      {"/v1/tools/call", R"({"arguments":{}})", "invalid_arguments"},
      {"/v1/tools/call", R"({"name":"echo","arguments":3})", "invalid_arguments"},
      {"/v1/tools/call", R"({"name":"echo","extra":1})", "invalid_arguments"},
      {"/v1/tools/batch", R"({"name":"echo"})", "invalid_arguments"},
      {"/v1/tools/batch", R"([{"name":"echo"}, 7])", "invalid_arguments"},
  };
  for (const Case& c : cases) {
    auto [status, answer] = post(kKeyA, c.path, c.body);
    EXPECT_EQ(status, 400) << c.body;
    EXPECT_EQ(errorCode(answer), c.code) << c.body;
  }
}

TEST_F(ToolsHttpServiceTest, EachQuotaIs429WithItsKeyField) {
  // tight: concurrent=1 batch=2.
  auto [status, answer] =
      post(kKeyTight, "/v1/tools/batch", R"([{"name":"echo"},{"name":"echo"},{"name":"echo"}])");
  EXPECT_EQ(status, 429);
  EXPECT_EQ(errorCode(answer), "quota_exceeded");
  EXPECT_NE(answer.dump().find("batch="), std::string::npos) << answer.dump();

  std::thread holder([&] { post(kKeyTight, "/v1/tools/call", R"({"name":"wait"})"); });
  ASSERT_TRUE(waitUntil([&] { return backend_.waiting() == 1; }, std::chrono::seconds(10)));
  auto [busy, refused] = post(kKeyTight, "/v1/tools/call", R"({"name":"echo"})");
  EXPECT_EQ(busy, 429);
  EXPECT_NE(refused.dump().find("concurrent="), std::string::npos) << refused.dump();
  // Another caller is not held back by it.
  EXPECT_EQ(post(kKeyB, "/v1/tools/call", R"({"name":"echo"})").first, 200);
  backend_.release();
  holder.join();

  // slow: one call per 100 s, so the second is refused however slow this runs.
  EXPECT_EQ(post(kKeySlow, "/v1/tools/call", R"({"name":"echo"})").first, 200);
  auto [fast, overRate] = post(kKeySlow, "/v1/tools/call", R"({"name":"echo"})");
  EXPECT_EQ(fast, 429);
  EXPECT_NE(overRate.dump().find("rate="), std::string::npos) << overRate.dump();
  EXPECT_EQ(post(kKeyA, "/v1/tools/call", R"({"name":"echo"})").first, 200);
}

TEST_F(ToolsHttpServiceTest, UnknownEndpointsAndMethodsAre404And405AsJson) {
  auto [status, answer] = post(kKeyA, "/v1/tools/nope", "{}");
  EXPECT_EQ(status, 404);
  EXPECT_EQ(errorCode(answer), "unknown_endpoint");
  auto c = client(kKeyA);
  auto get = c.Get("/v1/tools/call");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_EQ(errorCode(json::parse(get->body)), "unknown_endpoint");
  auto del = c.Delete("/v1/tools");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

TEST_F(ToolsHttpServiceTest, OneCallersBadInputDoesNotAffectAnothersConcurrentCalls) {
  std::atomic<bool> stop{false};
  std::atomic<int> badAnswered{0};
  std::thread bad([&] {
    const std::vector<std::pair<std::string, std::string>> hostile = {
        {"/v1/tools/call", "{not json"},
        {"/v1/tools/call", std::string(8000, '[')},
        {"/v1/tools/batch", R"([{"name":"echo"},{"name":"echo"},{"name":"echo"}])"},
        {"/v1/tools/call", R"({"name":"nope"})"},
    };
    for (int i = 0; i < 200 && !stop.load(); ++i) {
      const auto& [path, body] = hostile[i % hostile.size()];
      const int status = post(kKeyTight, path, body).first;
      if (status >= 400 && status < 500) ++badAnswered;
    }
  });
  int good = 0;
  for (int i = 0; i < 40; ++i) {
    auto [status, answer] = post(kKeyB, "/v1/tools/batch",
                                 json::array({{{"name", "echo"}, {"arguments", {{"i", i}}}},
                                              {{"name", "echo"}, {"arguments", {{"i", i + 1}}}}})
                                     .dump());
    if (status == 200 && answer.size() == 2 && answer[1]["arguments"]["i"] == i + 1 &&
        answer[0]["caller"] == "trainer-b") {
      ++good;
    }
  }
  stop = true;
  bad.join();
  EXPECT_EQ(good, 40);
  EXPECT_GT(badAnswered.load(), 0);
}

TEST(ToolsHttpServiceOptionsTest, RefusesABadPortAnAddressInUseAndNoThreads) {
  ScriptedBackend backend;
  auto keys = [] { return *ApiKeys::parse(fmt::format("{} a\n", kKeyA), "test"); };
  ToolsServiceOptions badPort;
  badPort.port = 70000;
  EXPECT_FALSE(ToolsHttpService::create(badPort, keys(), backend, nullptr).ok());
  ToolsServiceOptions noThreads;
  noThreads.httpThreads = 0;
  EXPECT_FALSE(ToolsHttpService::create(noThreads, keys(), backend, nullptr).ok());
  auto first = ToolsHttpService::create({}, keys(), backend, nullptr);
  ASSERT_TRUE(first.ok());
  auto port = (*first)->start();
  ASSERT_TRUE(port.ok());
  ToolsServiceOptions same;
  same.port = *port;
  auto second = ToolsHttpService::create(same, keys(), backend, nullptr);
  ASSERT_TRUE(second.ok());
  auto taken = (*second)->start();
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.status().message().find("--listen"), std::string::npos);
}

}  // namespace
}  // namespace kiln::tools_service
