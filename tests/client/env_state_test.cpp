// The states CSV (include/kiln/client/env_state.h): CompilerGym's format both ways, its
// commandline forms, and a clear error naming the line for every bad row.
#include <kiln/client/env_state.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kiln::client {
namespace {

Space passes() {
  Space space = Space::namedDiscrete("PassesAll", {"gvn", "instcombine", "mem2reg", "sroa"});
  space.aliases = {"-gvn", "-instcombine", "-mem2reg", "-sroa"};
  return space;
}

TEST(EnvStateTest, WritesCompilerGymsColumnsAndPythonsNumbers) {
  EnvState state{"benchmark://kiln-bench-v0/qsort", {"mem2reg", "gvn"}, 1.5, 0.25};
  EXPECT_EQ(toCsvRow(state), "benchmark://kiln-bench-v0/qsort,0.25,1.5,mem2reg gvn\n");
  state.reward.reset();
  state.walltime = 2;
  EXPECT_EQ(toCsvRow(state), "benchmark://kiln-bench-v0/qsort,,2.0,mem2reg gvn\n");
  state.walltime = 1e-05;
  state.reward = 1e16;
  EXPECT_EQ(toCsvRow(state), "benchmark://kiln-bench-v0/qsort,1e+16,1e-05,mem2reg gvn\n");
  state.reward = -0.1;
  state.walltime = 123456789.125;
  EXPECT_EQ(toCsvRow(state), "benchmark://kiln-bench-v0/qsort,-0.1,123456789.125,mem2reg gvn\n");
  const std::vector<EnvState> states{state};
  EXPECT_TRUE(toCsv(states).starts_with("benchmark,reward,walltime,commandline\n"));
}

TEST(EnvStateTest, QuotesFieldsThatNeedIt) {
  EnvState state{"file://a,b \"c\".ll", {}, 0, std::nullopt};
  EXPECT_EQ(toCsvRow(state), "\"file://a,b \"\"c\"\".ll\",,0.0,\n");
  auto back = parseStatesCsv(toCsvRow(state));
  ASSERT_TRUE(back.ok()) << back.status().toString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->front(), state);
}

TEST(EnvStateTest, RoundTripsManyStates) {
  std::vector<EnvState> states;
  for (int i = 0; i < 50; ++i) {
    EnvState s{"benchmark://kiln-bench-v0/p" + std::to_string(i), {}, i * 0.37, std::nullopt};
    for (int a = 0; a < i % 7; ++a) s.actions.push_back(a % 2 ? "gvn" : "sroa");
    if (i % 3) s.reward = 1.0 / (i + 1);
    states.push_back(s);
  }
  auto back = parseStatesCsv(toCsv(states));
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, states);
}

TEST(EnvStateTest, ReadsHeaderlessRowsAndColumnsInAnyOrder) {
  auto plain = parseStatesCsv("benchmark://x/a,1.0,2.0,gvn sroa\r\n\r\nbenchmark://x/b,,,\n");
  ASSERT_TRUE(plain.ok()) << plain.status().toString();
  ASSERT_EQ(plain->size(), 2u);
  EXPECT_EQ((*plain)[0].actions, (std::vector<std::string>{"gvn", "sroa"}));
  EXPECT_FALSE((*plain)[1].reward.has_value());
  EXPECT_EQ((*plain)[1].walltime, 0.0);
  EXPECT_TRUE((*plain)[1].actions.empty());

  auto shuffled =
      parseStatesCsv("commandline,walltime,benchmark,reward\ngvn,3,benchmark://x/c,-2\n");
  ASSERT_TRUE(shuffled.ok()) << shuffled.status().toString();
  EXPECT_EQ(shuffled->front(), (EnvState{"benchmark://x/c", {"gvn"}, 3.0, -2.0}));
}

TEST(EnvStateTest, AValidityColumnIsWrittenWhenKnownAndReadBack) {
  std::vector<EnvState> states{{"benchmark://x/a", {"gvn"}, 1.0, 0.5, "valid"},
                               {"benchmark://x/b", {}, 2.0, std::nullopt, ""}};
  const std::string text = toCsv(states);
  EXPECT_TRUE(text.starts_with("benchmark,reward,walltime,commandline,validity\n")) << text;
  EXPECT_NE(text.find("benchmark://x/a,0.5,1.0,gvn,valid\n"), std::string::npos) << text;
  auto back = parseStatesCsv(text);
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, states);
  // No state with a validity: CompilerGym's four columns exactly.
  states[0].validity.clear();
  EXPECT_TRUE(toCsv(states).starts_with("benchmark,reward,walltime,commandline\n"));

  auto shuffled = parseStatesCsv(
      "validity,benchmark,reward,walltime,commandline\n"
      "invalid,benchmark://x/c,1,2,gvn\n");
  ASSERT_TRUE(shuffled.ok()) << shuffled.status().toString();
  EXPECT_EQ(shuffled->front().validity, "invalid");
  auto unknown = parseStatesCsv(
      "benchmark,reward,walltime,commandline,validity\n"
      "benchmark://x/c,1,2,gvn,probably\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("line 2: validity 'probably' is none of"),
            std::string::npos)
      << unknown.status().message();
}

TEST(EnvStateTest, ReadsCompilerGymsOptCommandlineThroughTheAliases) {
  const Space space = passes();
  auto actions = parseCommandline("opt -mem2reg -gvn input.bc -o output.bc", &space);
  ASSERT_TRUE(actions.ok()) << actions.status().toString();
  EXPECT_EQ(*actions, (std::vector<std::string>{"mem2reg", "gvn"}));
  auto mixed = parseCommandline("gvn  -sroa\tinstcombine", &space);
  ASSERT_TRUE(mixed.ok()) << mixed.status().toString();
  EXPECT_EQ(*mixed, (std::vector<std::string>{"gvn", "sroa", "instcombine"}));
  // Without a space the flags stay as written, for the env to resolve.
  auto kept = parseCommandline("/usr/bin/opt-19 -gvn input.bc -o output.bc");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, (std::vector<std::string>{"-gvn"}));
  auto none = parseCommandline("opt input.bc -o output.bc");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// kiln.compiler_gym's env.commandline(): one opt-19 run per action, piped,
// each with the action's pipeline (quoted by Python's shlex.quote).
TEST(EnvStateTest, ReadsTheCompatibilityEnvsOpt19ChainThroughThePipelines) {
  Space space = Space::namedDiscrete("PassesAll", {"mem2reg", "early-cse-memssa", "gvn"});
  space.aliases = {"-mem2reg", "-early-cse-memssa", "-gvn"};
  ValueDict metadata;
  metadata.emplace_back("pipelines", Value(ValueList{Value(std::string("mem2reg")),
                                                     Value(std::string("early-cse<memssa>")),
                                                     Value(std::string("gvn"))}));
  space.metadata = Value(std::move(metadata));
  const std::string chain =
      "opt-19 -passes=mem2reg input.bc -o - | opt-19 -passes='early-cse<memssa>' - -o - | "
      "opt-19 -passes=gvn - -o output.bc";
  auto actions = parseCommandline(chain, &space);
  ASSERT_TRUE(actions.ok()) << actions.status().toString();
  EXPECT_EQ(*actions, (std::vector<std::string>{"mem2reg", "early-cse-memssa", "gvn"}));
  // Without a space the pipelines stay as written; findAction resolves them.
  auto kept = parseCommandline(chain);
  ASSERT_TRUE(kept.ok()) << kept.status().toString();
  EXPECT_EQ(*kept, (std::vector<std::string>{"mem2reg", "early-cse<memssa>", "gvn"}));
  EXPECT_EQ(*findAction(space, "early-cse<memssa>"), 1);
  EXPECT_FALSE(findAction(space, "early-cse<>").ok());
  // textformat=True's form, and one action.
  auto text = parseCommandline("opt-19 -passes=gvn input.ll -S -o output.ll", &space);
  ASSERT_TRUE(text.ok()) << text.status().toString();
  EXPECT_EQ(*text, (std::vector<std::string>{"gvn"}));
  auto unknown = parseCommandline("opt-19 -passes=licm input.bc -o output.bc", &space);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'licm'"), std::string::npos);
}

TEST(EnvStateTest, UnknownActionsAreNamedWithNearNames) {
  const Space space = passes();
  auto typo = parseCommandline("mem2reg gnv", &space);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("'gnv'"), std::string::npos);
  EXPECT_NE(typo.status().message().find("did you mean 'gvn'"), std::string::npos)
      << typo.status().message();
  auto row = parseStatesCsv(
      "benchmark,reward,walltime,commandline\nb://x,,1,sroa\nb://y,,1,-instcombin\n", &space);
  ASSERT_FALSE(row.ok());
  EXPECT_TRUE(row.status().message().starts_with("line 3: ")) << row.status().message();
  EXPECT_NE(row.status().message().find("-instcombine"), std::string::npos);
}

TEST(EnvStateTest, BadRowsNameTheLineAndWhatIsWrong) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"benchmark,reward,walltime,commandline\nb://x,1.0,2.0\n", "line 2: 3 columns, expected 4"},
      {"b://x,1.0,2.0,gvn,extra\n", "line 1: 5 columns"},
      {"b://x,abc,2.0,gvn\n", "line 1: reward 'abc' is not a finite number"},
      {"b://x,1.0,2s,gvn\n", "line 1: walltime '2s' is not a finite number"},
      {"b://x,nan,2,gvn\n", "line 1: reward 'nan' is not a finite number"},
      {"b://x,1,-3,gvn\n", "line 1: walltime -3.0 is negative"},
      {",1,2,gvn\n", "line 1: the benchmark is empty"},
      {"b://x,1,2,gvn\nb://y,1,2,\"gvn\n", "line 2: a quoted field is never closed"},
      {"b://x,1,2,\"gvn\"x\n", "line 1: text after the closing quote"},
      {"benchmark,reward,walltime\nb://x,1,2\n", "line 1: the header lacks column 'commandline'"},
      {"benchmark,reward,walltime,commandline,extra\n",
       "line 1: the header has an unknown column 'extra'"},
      {"b://x,1,2,\"gvn\nsroa\"\n", "line 1: the commandline has a control character (byte 0x0a)"},
      {"b://x,1,2,opt-19 -passes=gvn in.bc -o - | opt-19 -gvn - -o out.bc\n",
       "line 1: '-gvn' in a -passes= commandline"},
      {"b://x,1,2,opt-19 -passes=gvn -passes=sroa in.bc\n",
       "line 1: a stage of the commandline "
       "has two -passes="},
      {"b://x,1,2,opt-19 -passes=gvn in.bc -o - | sroa\n", "line 1: 'sroa' begins a stage"},
      {"b://x,1,2,opt-19 -passes=gvn in.bc -o - | opt-19 - -o out.bc\n",
       "line 1: a stage of the commandline has no -passes="},
      {"b://x,1,2,opt -gvn in.bc -o\n", "line 1: the commandline ends with '-o'"},
  };
  for (const Case& c : cases) {
    auto result = parseStatesCsv(c.text);
    ASSERT_FALSE(result.ok()) << c.text;
    EXPECT_EQ(result.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(c.expected), std::string::npos)
        << "input: " << c.text << "\nmessage: " << result.status().message();
  }
}

TEST(EnvStateTest, HugeCommandlinesAreRefusedNotRead) {
  std::string many;
  for (std::size_t i = 0; i <= kMaxCommandlineActions; ++i) many += "gvn ";
  auto tooMany = parseCommandline(many);
  ASSERT_FALSE(tooMany.ok());
  EXPECT_NE(tooMany.status().message().find("10001 actions, more than the 10000"),
            std::string::npos)
      << tooMany.status().message();
  const std::string huge(kMaxCommandlineBytes + 1, 'a');
  auto tooBig = parseStatesCsv("b://x,1,2," + huge + "\n");
  ASSERT_FALSE(tooBig.ok());
  EXPECT_NE(tooBig.status().message().find("line 1: the commandline is 1048577 bytes"),
            std::string::npos);
}

TEST(EnvStateTest, FilesRoundTripAndMissingFilesAreNotFound) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("kiln-env-state-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<EnvState> states = {{"benchmark://kiln-bench-v0/a", {"gvn"}, 0.5, 1.0},
                                        {"benchmark://kiln-bench-v0/b", {}, 0.0, std::nullopt}};
  ASSERT_TRUE(writeStatesFile(dir / "states.csv", states).ok());
  auto back = readStatesFile(dir / "states.csv");
  ASSERT_TRUE(back.ok()) << back.status().toString();
  EXPECT_EQ(*back, states);
  auto missing = readStatesFile(dir / "absent.csv");
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  {
    std::ofstream bad(dir / "bad.csv");
    bad << "benchmark,reward,walltime,commandline\nb://x,zz,1,gvn\n";
  }
  auto bad = readStatesFile(dir / "bad.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.csv: line 2: reward 'zz'"), std::string::npos)
      << bad.status().message();
  auto directory = readStatesFile(dir);
  EXPECT_FALSE(directory.ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::client
