// Run specs from outside are data, bounded and checked: every way one can
// be wrong gets a clear error naming it.
#include "programs/runs/run_spec.h"

#include <gtest/gtest.h>

namespace kiln::runs {
namespace {

TEST(RunSpecTest, ParsesInputsAndLibraries) {
  auto spec = parseRunSpec(
      R"({"inputs": [{"args": []}, {"args": ["1", "x y"], "stdin": "abc\n"}], "libraries": ["m"]})",
      "t.run.json");
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  ASSERT_EQ(spec->inputs.size(), 2u);
  EXPECT_TRUE(spec->inputs[0].args.empty());
  EXPECT_EQ(spec->inputs[1].args, (std::vector<std::string>{"1", "x y"}));
  EXPECT_EQ(spec->inputs[1].stdinBytes, "abc\n");
  EXPECT_EQ(spec->libraries, std::vector<std::string>{"m"});
  EXPECT_EQ(describeInput(*spec, 1), "input 2 (args: 1 x y, 4 bytes of stdin)");
  EXPECT_EQ(describeInput(*spec, 0), "input 1 (no args)");
}

TEST(RunSpecTest, EveryWayToBeWrongIsNamed) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not a valid run spec"},
      {"[]", "it is not an object"},
      {"{}", "no \"inputs\""},
      {R"({"inputs": []})", "needs 1 to 16"},
      {R"({"inputs": [{"args": [1]}]})", "not a string"},
      {R"({"inputs": [{"argv": []}]})", "unknown member \"argv\""},
      {R"({"inputs": [{}], "link": ["-fplugin=x"]})", "unknown member \"link\""},
      {R"({"inputs": [{}], "libraries": ["-Wl,--wrap"]})", "not one a benchmark may link"},
      {R"({"inputs": [{}], "libraries": ["ssl"]})", "not one a benchmark may link"},
      {R"({"inputs": [{"stdin": 3}]})", "\"stdin\" is not a string"},
  };
  for (const auto& [json, expected] : cases) {
    auto spec = parseRunSpec(json, "x.run.json");
    ASSERT_FALSE(spec.ok()) << json;
    EXPECT_EQ(spec.status().code(), ErrorCode::kInvalidArgument) << json;
    EXPECT_NE(spec.status().message().find(expected), std::string::npos)
        << json << " -> " << spec.status().message();
    EXPECT_NE(spec.status().message().find("x.run.json"), std::string::npos);
  }
  std::string many = R"({"inputs": [)";
  for (int i = 0; i < 17; ++i) many += std::string(i ? "," : "") + "{}";
  EXPECT_FALSE(parseRunSpec(many + "]}", "x").ok());
  EXPECT_FALSE(
      parseRunSpec(R"({"inputs": [{"args": [")" + std::string(5000, 'a') + R"("]}]})", "x").ok());
}

TEST(RunSpecTest, ACorpusSpecTakesStdinFromItsFilesAClientsCannot) {
  std::vector<std::string> asked;
  InputFileReader reader = [&asked](const std::string& name) -> Result<std::string> {
    asked.push_back(name);
    if (name == "inputs/a.txt") return std::string("1 2 3");
    return notFound("no such file");
  };
  auto spec = parseRunSpec(R"({"inputs": [{"stdin_file": "inputs/a.txt"}, {"stdin": "x"}]})",
                           "m.run.json", reader);
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->inputs[0].stdinBytes, "1 2 3");
  EXPECT_EQ(spec->inputs[1].stdinBytes, "x");
  EXPECT_EQ(asked, std::vector<std::string>{"inputs/a.txt"});

  const std::pair<std::string, std::string> wrong[] = {
      {R"({"inputs": [{"stdin_file": "missing"}]})", "\"stdin_file\" \"missing\" cannot be read"},
      {R"({"inputs": [{"stdin_file": 1}]})", "\"stdin_file\" is not a string"},
      {R"({"inputs": [{"stdin": "", "stdin_file": "inputs/a.txt"}]})", "both"},
  };
  for (const auto& [json, expected] : wrong) {
    auto refused = parseRunSpec(json, "m.run.json", reader);
    ASSERT_FALSE(refused.ok()) << json;
    EXPECT_NE(refused.status().message().find(expected), std::string::npos)
        << refused.status().message();
  }
  // Without a reader (a client's spec) a file is refused before anything is read.
  asked.clear();
  auto client = parseRunSpec(R"({"inputs": [{"stdin_file": "inputs/a.txt"}]})", "llvm.run_spec");
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("only a corpus's own run spec"), std::string::npos);
  EXPECT_TRUE(asked.empty());
}

TEST(RunSpecTest, TheBuiltInSpecs) {
  RunSpec bench = kilnBenchRunSpec();
  ASSERT_EQ(bench.inputs.size(), 4u);
  EXPECT_TRUE(bench.inputs[0].args.empty());
  EXPECT_EQ(bench.inputs[3].args, std::vector<std::string>{"3"});
  EXPECT_EQ(bench.libraries, std::vector<std::string>{"m"});
  EXPECT_EQ(csmithRunSpec().inputs.size(), 1u);
}

}  // namespace
}  // namespace kiln::runs
