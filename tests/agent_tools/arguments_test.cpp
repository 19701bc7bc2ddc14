// The agent tools' argument rules without a cluster: each way to be wrong
// gives its code and a message that names what was wrong.
#include "tools/agent_tools/tool_arguments.h"

#include <gtest/gtest.h>

#include "fake_spaces.h"
#include "tools/agent_tools/base64.h"

namespace kiln::agent_tools {
namespace {

ParsedCall parse(std::string_view tool, std::string_view arguments, ToolLimits limits = {}) {
  return parseCall(tool, arguments, fakeToolSpaces(), limits);
}

// The failure of a call expected to fail: its code and message.
ToolFailure failureOf(const ParsedCall& parsed) {
  if (const auto* failure = std::get_if<ToolFailure>(&parsed)) return *failure;
  ADD_FAILURE() << "the call was accepted";
  return {};
}

void expectFailure(const ParsedCall& parsed, ToolError error, std::string_view mentions) {
  ToolFailure failure = failureOf(parsed);
  EXPECT_EQ(toolErrorName(failure.error), toolErrorName(error)) << failure.message;
  EXPECT_NE(failure.message.find(mentions), std::string::npos) << failure.message;
}

TEST(ToolArguments, AStatelessCallNamesItsPassesByIndex) {
  auto parsed = parse("apply_passes",
                      R"({"benchmark": "benchmark://x/y", "passes": ["sroa", "-gvn"],
                          "observe": ["Autophase"]})");
  ASSERT_TRUE(std::holds_alternative<ToolRequest>(parsed)) << failureOf(parsed).message;
  const ToolRequest& request = std::get<ToolRequest>(parsed);
  EXPECT_EQ(request.state.benchmark, "benchmark://x/y");
  EXPECT_EQ(request.state.passes, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(request.observe, std::vector<std::string>{"Autophase"});
  EXPECT_FALSE(request.keepEpisode);
}

TEST(ToolArguments, MalformedJsonAndNonObjectsAreInvalidJson) {
  for (const char* text : {"", "{", "[1, 2]", "\"passes\"", "{\"passes\": [}", "nul"}) {
    SCOPED_TRACE(text);
    expectFailure(parse("apply_passes", text), ToolError::kInvalidJson, "apply_passes");
  }
}

TEST(ToolArguments, AnUnknownToolIsNamedWithTheClosestTool) {
  expectFailure(parse("apply_pass", "{}"), ToolError::kUnknownTool, "'apply_passes'");
  expectFailure(parse("rm -rf", "{}"), ToolError::kUnknownTool, "ir_text");
}

TEST(ToolArguments, AnUnknownPassIsNamedWithItsPlaceAndTheCloseNames) {
  ToolFailure failure = failureOf(
      parse("apply_passes", R"({"benchmark": "b://x", "passes": ["sroa", "instcombin"]})"));
  EXPECT_EQ(failure.error, ToolError::kUnknownPass);
  EXPECT_NE(failure.message.find("'instcombin'"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("passes[1]"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("'instcombine'"), std::string::npos) << failure.message;
}

TEST(ToolArguments, OversizedInputIsTooLargeNamingTheLimit) {
  ToolLimits limits;
  limits.maxModuleBytes = 100;
  limits.maxPassesPerCall = 2;
  limits.maxIrTextBytes = 50;
  const std::string module = "define i32 @f() {\n" + std::string(200, ' ') + "ret i32 0\n}\n";
  const nlohmann::json oversized = {{"module", module}, {"passes", nlohmann::json::array()}};
  expectFailure(parse("apply_passes", oversized.dump(), limits), ToolError::kTooLarge,
                "maxModuleBytes");
  expectFailure(
      parse("apply_passes", R"({"benchmark": "b://x", "passes": ["gvn","gvn","gvn"]})", limits),
      ToolError::kTooLarge, "maxPassesPerCall");
  expectFailure(parse("ir_text", R"({"benchmark": "b://x", "max_bytes": 51})", limits),
                ToolError::kTooLarge, "maxIrTextBytes");
  // Far over: refused before the JSON is even read.
  expectFailure(parse("apply_passes", std::string(1 << 20, '['), limits), ToolError::kTooLarge,
                "64 KiB");
}

TEST(ToolArguments, WrongShapesAreInvalidArgumentsNamingTheArgument) {
  struct Case {
    const char* tool;
    const char* arguments;
    const char* mentions;
  };
  const Case cases[] = {
      {"apply_passes", R"({"benchmark": "b://x"})", "'passes'"},
      {"apply_passes", R"({"passes": []})", "exactly one of"},
      {"apply_passes", R"({"benchmark": "b://x", "module": "m", "passes": []})", "several"},
      {"apply_passes", R"({"benchmark": 7, "passes": []})", "'benchmark' must be a string"},
      {"apply_passes", R"({"benchmark": "b://x", "passes": "gvn"})", "'passes' must be a list"},
      {"apply_passes", R"({"benchmark": "b://x", "passes": [3]})", "'passes[0]'"},
      {"apply_passes", R"({"benchmark": "b://x", "passes": [], "speed": 1})", "'speed'"},
      {"apply_passes", R"({"episode": "ep-1", "passes": [], "keep_episode": true})",
       "keep_episode"},
      {"apply_passes", R"({"benchmark": "b://x", "passes": [], "keep_episode": "yes"})",
       "'keep_episode'"},
      {"observe", R"({"episode": "ep-1"})", "'observe'"},
      {"observe", R"({"episode": "ep-1", "passes": ["gvn"], "observe": ["Autophase"]})",
       "apply_passes"},
      {"observe", R"({"benchmark": "b://x", "observe": ["Autophase", "Autophase"]})", "twice"},
      {"ir_text", R"({"benchmark": "b://x"})", "max_bytes"},
      {"ir_text", R"({"benchmark": "b://x", "max_bytes": 0})", "max_bytes"},
      {"ir_text", R"({"benchmark": "b://x", "max_bytes": 1.5})", "max_bytes"},
      {"fork_episode", R"({})", "'episode'"},
      {"end_episode", R"({"benchmark": "b://x"})", "'benchmark'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.tool) + " " + c.arguments);
    expectFailure(parse(c.tool, c.arguments), ToolError::kInvalidArguments, c.mentions);
  }
}

TEST(ToolArguments, AnObservationTheToolsDoNotOfferIsNamed) {
  expectFailure(parse("observe", R"({"benchmark": "b://x", "observe": ["Runtime"]})"),
                ToolError::kUnknownObservation, "'Runtime'");
  expectFailure(parse("observe", R"({"benchmark": "b://x", "observe": ["Autophas"]})"),
                ToolError::kUnknownObservation, "'Autophase'");
}

TEST(ToolArguments, AModuleIsIrTextOrBase64BitcodeUnderAUriOfItsContent) {
  const std::string ir = "define i32 @main() {\n  ret i32 0\n}\n";
  nlohmann::json arguments = {{"module", ir}, {"passes", nlohmann::json::array()}};
  auto text = parse("apply_passes", arguments.dump());
  ASSERT_TRUE(std::holds_alternative<ToolRequest>(text)) << failureOf(text).message;
  EXPECT_EQ(std::get<ToolRequest>(text).state.module, ir);
  EXPECT_TRUE(std::get<ToolRequest>(text).state.benchmark.starts_with("benchmark://user-v0/"));

  const std::string bitcode = std::string("BC\xC0\xDE", 4) + "rest";
  arguments["module"] = base64Encode(bitcode);
  auto binary = parse("apply_passes", arguments.dump());
  ASSERT_TRUE(std::holds_alternative<ToolRequest>(binary)) << failureOf(binary).message;
  EXPECT_EQ(std::get<ToolRequest>(binary).state.module, bitcode);
  EXPECT_NE(std::get<ToolRequest>(binary).state.benchmark,
            std::get<ToolRequest>(text).state.benchmark);
}

}  // namespace
}  // namespace kiln::agent_tools
