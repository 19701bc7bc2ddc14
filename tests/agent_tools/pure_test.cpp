// The agent tools' policy without a cluster: base64, IR trimming, the
// prefix cache's choices and bounds, the schema's shape.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "fake_spaces.h"
#include "tools/agent_tools/base64.h"
#include "tools/agent_tools/ir_trim.h"
#include "tools/agent_tools/lane_choice.h"
#include "tools/agent_tools/prefix_cache.h"
#include "tools/agent_tools/tool_error.h"
#include "tools/agent_tools/tool_schema.h"
#include "worker/session_host.h"

namespace kiln::agent_tools {
namespace {

TEST(Base64, RoundTripsEveryLengthAndRefusesWhatIsNotBase64) {
  std::string bytes;
  for (int i = 0; i < 70; ++i) {
    EXPECT_EQ(base64Decode(base64Encode(bytes)), bytes) << "length " << i;
    bytes.push_back(static_cast<char>(i * 37));
  }
  EXPECT_EQ(base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(base64Decode("Zm9v\nYg=="), "foob");
  EXPECT_FALSE(base64Decode("Zm9vYg="));     // length
  EXPECT_FALSE(base64Decode("Zm9v*g=="));    // character
  EXPECT_FALSE(base64Decode("Zm=vYg=="));    // padding inside
  EXPECT_FALSE(base64Decode("define i32"));  // IR text
}

constexpr const char* kModule =
    "; ModuleID = 'm'\n"
    "target triple = \"x86_64-unknown-linux-gnu\"\n"
    "@g = global i32 0\n"
    "define i32 @small() {\n  ret i32 1\n}\n"
    "define i32 @large(i32 %x) {\n  %a = add i32 %x, 1\n  %b = add i32 %a, 2\n"
    "  %c = add i32 %b, 3\n  ret i32 %c\n}\n"
    "define i32 @main() {\n  ret i32 0\n}\n"
    "attributes #0 = { nounwind }\n";

TEST(IrTrim, AModuleWithinTheBudgetComesWholeAndSaysSo) {
  TrimmedIr whole = trimIr(kModule, 100'000);
  EXPECT_FALSE(whole.trimmed);
  EXPECT_EQ(whole.text, kModule);
  EXPECT_EQ(whole.bytesShown, whole.bytesTotal);
  EXPECT_TRUE(whole.functionsCut.empty());
  EXPECT_NE(whole.note.find("whole module"), std::string::npos) << whole.note;
}

TEST(IrTrim, FunctionsThatDoNotFitAreLeftOutWholeAndNamed) {
  const std::string module = kModule;
  const std::size_t large = module.find("define i32 @large");
  const std::size_t main = module.find("define i32 @main");
  const std::size_t largeSize = main - large;
  // Room for everything but @large.
  TrimmedIr trimmed = trimIr(module, module.size() - largeSize);
  EXPECT_TRUE(trimmed.trimmed);
  EXPECT_EQ(trimmed.functionsCut, std::vector<std::string>{"@large"});
  EXPECT_EQ(trimmed.text.find("@large"), std::string::npos);
  EXPECT_NE(trimmed.text.find("define i32 @main"), std::string::npos);
  EXPECT_NE(trimmed.text.find("attributes #0"), std::string::npos);
  EXPECT_EQ(trimmed.bytesShown, trimmed.text.size());
  EXPECT_EQ(trimmed.bytesTotal, module.size());
  EXPECT_NE(trimmed.note.find("@large"), std::string::npos) << trimmed.note;
  EXPECT_NE(trimmed.note.find(std::to_string(module.size())), std::string::npos) << trimmed.note;
}

TEST(IrTrim, NeverExceedsTheBudgetAndCutsOnlyAtLineEnds) {
  // Blank lines between the definitions, as LLVM prints them: a budget spent
  // exactly must not take one more line.
  std::string module = kModule;
  for (std::size_t at = module.find("}\n"); at != std::string::npos; at = module.find("}\n", at)) {
    module.insert(at + 2, "\n; Function Attrs: nounwind\n");
    at += 3;
  }
  for (std::uint64_t budget = 0; budget <= module.size(); ++budget) {
    TrimmedIr trimmed = trimIr(module, budget);
    ASSERT_LE(trimmed.text.size(), budget);
    if (!trimmed.text.empty()) {
      EXPECT_EQ(trimmed.text.back(), '\n') << "budget " << budget;
    }
    // Every function is either shown whole or named as cut.
    for (const char* name : {"@small", "@large", "@main"}) {
      const bool shown = trimmed.text.find(std::string("define i32 ") + name) != std::string::npos;
      const bool cut = std::find(trimmed.functionsCut.begin(), trimmed.functionsCut.end(), name) !=
                       trimmed.functionsCut.end();
      EXPECT_NE(shown, cut) << name << " at budget " << budget;
    }
  }
}

TEST(IrTrim, TheCommentsBeforeADefinitionGoWithIt) {
  const std::string module =
      "target triple = \"x\"\n\n; Function Attrs: a\ndefine void @f() {\n  ret void\n}\n"
      "\n; Function Attrs: b\ndefine void @g() {\n  ret void\n}\n";
  const std::size_t g = module.find("\n; Function Attrs: b");
  TrimmedIr trimmed = trimIr(module, g);  // everything before @g's notes fits
  EXPECT_EQ(trimmed.functionsCut, std::vector<std::string>{"@g"});
  EXPECT_EQ(trimmed.text, module.substr(0, g));
}

TEST(LaneChoice, TheLongestCachedPrefixOfTheBenchmarkCounts) {
  const PrefixKeys keys = {{"a", {}}, {"a", {1, 2}}, {"a", {1, 2, 3, 4}}, {"b", {1, 2, 3}}};
  EXPECT_EQ(longestCachedPrefix(keys, "a", {1, 2, 3}), 2);
  EXPECT_EQ(longestCachedPrefix(keys, "a", {1, 2, 3, 4, 5}), 4);
  EXPECT_EQ(longestCachedPrefix(keys, "a", {2}), 0);  // the benchmark's start
  EXPECT_EQ(longestCachedPrefix(keys, "b", {1, 2}), -1);
  EXPECT_EQ(longestCachedPrefix(keys, "c", {}), -1);
  EXPECT_EQ(longestCachedPrefix({}, "a", {1}), -1);
}

TEST(LaneChoice, LanesWithLongerPrefixesComeFirstThenFromThePreferredSlot) {
  EXPECT_EQ(laneOrder({-1, 3, 0, 5}, 0), (std::vector<std::size_t>{3, 1, 2, 0}));
  // Ties keep the rotation from the preferred slot.
  EXPECT_EQ(laneOrder({-1, -1, -1}, 1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(laneOrder({2, -1, 2, -1}, 3), (std::vector<std::size_t>{0, 2, 3, 1}));
  EXPECT_EQ(laneOrder({7}, 0), (std::vector<std::size_t>{0}));
}

TEST(PrefixCache, TheLongestCachedPrefixOfTheSameBenchmarkWins) {
  PrefixCache<int> cache(8, 1000);
  cache.put("a", {}, 0, 1);
  cache.put("a", {1, 2}, 12, 1);
  cache.put("a", {1, 2, 3, 4}, 1234, 1);
  cache.put("b", {1, 2, 3}, 99, 1);
  std::size_t length = 0;
  EXPECT_EQ(*cache.longestPrefix("a", {1, 2, 3}, length), 12);
  EXPECT_EQ(length, 2u);
  EXPECT_EQ(*cache.longestPrefix("a", {1, 2, 3, 4, 5}, length), 1234);
  EXPECT_EQ(length, 4u);
  EXPECT_EQ(*cache.longestPrefix("a", {2}, length), 0);
  EXPECT_EQ(length, 0u);
  EXPECT_EQ(cache.longestPrefix("c", {1}, length), nullptr);
}

TEST(PrefixCache, TheLeastRecentlyUsedGoFirstOverEitherBound) {
  PrefixCache<int> byCount(2, 1000);
  byCount.put("a", {1}, 1, 1);
  byCount.put("a", {2}, 2, 1);
  std::size_t length = 0;
  ASSERT_NE(byCount.longestPrefix("a", {1}, length), nullptr);  // {1} is now the most recent
  byCount.put("a", {3}, 3, 1);
  EXPECT_EQ(byCount.size(), 2u);
  EXPECT_NE(byCount.longestPrefix("a", {1}, length), nullptr);
  EXPECT_EQ(byCount.longestPrefix("a", {2}, length), nullptr);

  PrefixCache<int> byWeight(100, 10);
  byWeight.put("a", {1}, 1, 6);
  byWeight.put("a", {2}, 2, 6);  // 12 > 10: {1} goes
  EXPECT_EQ(byWeight.size(), 1u);
  EXPECT_EQ(byWeight.weight(), 6u);
  byWeight.put("a", {3}, 3, 50);  // alone over the bound: kept, the others go
  EXPECT_EQ(byWeight.size(), 1u);
  EXPECT_NE(byWeight.longestPrefix("a", {3}, length), nullptr);
}

TEST(PrefixCache, SheddingGivesBackTheOlderHalfAndKeepsTheStateInUse) {
  PrefixCache<int> cache(100, 1000);
  for (int i = 0; i < 6; ++i) cache.put("a", {i}, i, 1);
  std::size_t length = 0;
  ASSERT_NE(cache.longestPrefix("a", {0}, length), nullptr);  // {0} is now the most recent
  std::vector<int> shed = cache.shed("a", {1});               // {1} is in use
  EXPECT_EQ(shed, (std::vector<int>{2, 3}));  // half of the other five, oldest first
  EXPECT_EQ(cache.size(), 4u);
  EXPECT_EQ(cache.weight(), 4u);
  EXPECT_NE(cache.longestPrefix("a", {1}, length), nullptr);
  PrefixCache<int> alone(100, 1000);
  alone.put("a", {}, 0, 1);
  EXPECT_TRUE(alone.shed("a", {}).empty());  // nothing but the state in use
}

TEST(ToolLimits, TheDefaultsFitInAWorkersDefaultSessionsPerClient) {
  const ToolLimits limits;
  // A lane's cached states, its episodes and the fork a call makes.
  EXPECT_LE(limits.prefixCacheEntries + limits.maxEpisodesPerCaller + 1,
            HostLimits{}.maxSessionsPerClient);
}

TEST(ToolSchema, ListsEveryToolInTheFunctionCallingFormatFromTheSpaces) {
  const ToolSpaces spaces = fakeToolSpaces();
  // Only offered observations: not Ir (its own tool) nor rewards.
  EXPECT_EQ(spaces.observationNames(),
            (std::vector<std::string>{"IrInstructionCount", "IrInstructionCountOz", "Autophase"}));
  const nlohmann::json schema = toolSchema(spaces, ToolLimits{});
  ASSERT_TRUE(schema.is_array());
  std::vector<std::string> names;
  for (const auto& tool : schema) {
    EXPECT_EQ(tool.at("type"), "function");
    const auto& function = tool.at("function");
    names.push_back(function.at("name"));
    EXPECT_FALSE(function.at("description").get<std::string>().empty());
    EXPECT_EQ(function.at("parameters").at("type"), "object");
    EXPECT_EQ(function.at("parameters").at("additionalProperties"), false);
  }
  EXPECT_EQ(names, toolNames());
  const auto& passes = schema[0]["function"]["parameters"]["properties"]["passes"];
  EXPECT_EQ(passes["items"]["enum"], nlohmann::json(spaces.passes.names));
  const auto& observe = schema[0]["function"]["parameters"]["properties"]["observe"];
  EXPECT_EQ(observe["items"]["enum"], nlohmann::json(spaces.observationNames()));
}

TEST(ToolSchema, EveryToolAndTheErrorHaveAResultSchema) {
  const nlohmann::json results = resultSchemas(fakeToolSpaces());
  for (const std::string& name : toolNames()) EXPECT_TRUE(results.contains(name)) << name;
  const auto& codes = results.at("error")["properties"]["error"]["properties"]["code"]["enum"];
  EXPECT_EQ(codes.size(), kAllToolErrors.size());
  EXPECT_EQ(results.at("observe")["properties"]["observations"]["properties"]["Autophase"]["type"],
            "array");
}

// One closed set of error codes: the enum's names (distinct, each its own),
// the schema's error schema and docs/tools.md's table of codes.
TEST(ToolError, TheCodesTheSchemaAndTheDocsAreOneSet) {
  std::set<std::string> names;
  for (ToolError error : kAllToolErrors) names.emplace(toolErrorName(error));
  EXPECT_EQ(names.size(), kAllToolErrors.size()) << "two codes share a name";
  EXPECT_TRUE(names.contains("unknown_endpoint"));
  EXPECT_TRUE(names.contains("internal"));

  const nlohmann::json results = resultSchemas(fakeToolSpaces());
  const auto& codes = results.at("error")["properties"]["error"]["properties"]["code"]["enum"];
  EXPECT_EQ(codes.get<std::set<std::string>>(), names);

  // The first table after "### Errors": rows "| `code` | ...".
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/tools.md");
  ASSERT_TRUE(in) << "docs/tools.md is missing";
  std::set<std::string> documented;
  const std::regex row(R"(^\| `([a-z_]+)` \|)");
  bool inErrors = false;
  bool inTable = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "### Errors") inErrors = true;
    if (!inErrors) continue;
    if (line.starts_with("|")) {
      inTable = true;
    } else if (inTable) {
      break;
    }
    std::smatch match;
    if (std::regex_search(line, match, row)) documented.insert(match[1]);
  }
  EXPECT_EQ(documented, names) << "docs/tools.md's table of error codes";
}

TEST(ToolSchema, SpacesOfAnotherTypeAreRefused) {
  client::SessionTypeSpaces noop;
  noop.actionSpaces = {Space::discrete("n", 3)};
  EXPECT_FALSE(toolSpacesFrom(noop).ok());
}

TEST(ToolError, StatusCodesMapOntoTheClosedSet) {
  EXPECT_EQ(fromStatus(compileError("x")).error, ToolError::kCompileFailed);
  EXPECT_EQ(fromStatus(overloaded("x")).error, ToolError::kQuotaExceeded);
  EXPECT_EQ(fromStatus(timeoutError("x")).error, ToolError::kUnavailable);
  EXPECT_EQ(fromStatus(disconnected("x")).error, ToolError::kUnavailable);
  EXPECT_EQ(fromStatus(invalidArgument("x")).error, ToolError::kInvalidArguments);
  EXPECT_EQ(fromStatus(internalError("x")).error, ToolError::kInternal);
  const auto answer = nlohmann::json::parse(errorJson(ToolError::kUnknownPass, "bad \xff"));
  EXPECT_EQ(answer["error"]["code"], "unknown_pass");
}

}  // namespace
}  // namespace kiln::agent_tools
