// The `llvm` session type end to end through an in-process cluster: spaces,
// steps, observations, rewards, forks, the parsed-module cache, dataset
// listing, and bad benchmarks that must fail cleanly while other sessions
// keep stepping.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>

#include <kiln/client/datasets.h>
#include "compilers/llvm_session/llvm_session.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session {
namespace {

using namespace testing;

std::int64_t intObs(client::Session& s, const std::string& name) {
  auto r = s.step({}, std::vector<std::string>{name});
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r.ok() ? r->observations.at(0).as<std::int64_t>() : -1;
}

std::string sha1(client::Session& s) {
  auto r = s.step({}, std::vector<std::string>{"IrSha1"});
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r.ok() ? r->observations.at(0).as<std::string>() : "";
}

TEST(LlvmSessionTest, SpacesFollowTheContract) {
  Cluster c = startCluster();
  auto spaces = c.client->getSpaces("llvm");
  ASSERT_TRUE(spaces.ok()) << spaces.status().toString();
  ASSERT_EQ(spaces->actionSpaces.size(), 2u);
  EXPECT_EQ(spaces->actionSpaces[0].name, "PassesAll");
  EXPECT_GE(spaces->actionSpaces[0].names.size(), 100u);
  EXPECT_EQ(spaces->actionSpaces[1].name, "PassesAndPipelines");
  std::vector<std::string> names;
  for (const Space& s : spaces->observationSpaces) names.push_back(s.name);
  const std::vector<std::string> expected = {"Ir",
                                             "IrSha1",
                                             "Bitcode",
                                             "IrInstructionCount",
                                             "IrInstructionCountO0",
                                             "IrInstructionCountO3",
                                             "IrInstructionCountOz",
                                             "InstCount",
                                             "InstCountDict",
                                             "Autophase",
                                             "AutophaseDict",
                                             "ObjectTextSizeBytes",
                                             "ObjectTextSizeO0",
                                             "ObjectTextSizeO3",
                                             "ObjectTextSizeOz",
                                             "Reward:IrInstructionCount",
                                             "Reward:IrInstructionCountOz",
                                             "Reward:ObjectTextSizeBytes",
                                             "Reward:ObjectTextSizeOz",
                                             "Buildtime",
                                             "IsBuildable",
                                             "IsRunnable",
                                             "Runtime",
                                             "RuntimeO3",
                                             "Validation",
                                             "Reward:RuntimeO3",
                                             "Programl",
                                             "RuntimeStats"};
  EXPECT_EQ(names, expected);
  // Running the program: times are measurements; what builds and runs
  // depends on the host.
  const std::set<std::string> measured = {"Buildtime", "Runtime", "RuntimeO3", "Reward:RuntimeO3",
                                          "RuntimeStats"};
  const std::set<std::string> ofTheHost = {"IsBuildable", "IsRunnable", "Validation"};
  for (const Space& s : spaces->observationSpaces) {
    EXPECT_EQ(s.deterministic, !measured.contains(s.name)) << s.name;
    EXPECT_EQ(s.platformDependent, s.name.find("ObjectTextSize") != std::string::npos ||
                                       measured.contains(s.name) || ofTheHost.contains(s.name))
        << s.name;
  }
}

// The default space holds single passes (as CompilerGym's); the second
// has the same actions at the same indices, then the pipelines. A session
// steps only actions of the space it started in, and its fork keeps it.
TEST(LlvmSessionTest, BothActionSpacesMeanTheSameByTheSameIndex) {
  Cluster c = startCluster();
  auto spaces = c.client->getSpaces("llvm");
  ASSERT_TRUE(spaces.ok()) << spaces.status().toString();
  ASSERT_EQ(spaces->actionSpaces.size(), 2u);
  const Space& single = spaces->actionSpaces[0];
  const Space& both = spaces->actionSpaces[1];
  ASSERT_GT(both.names.size(), single.names.size());
  EXPECT_TRUE(std::equal(single.names.begin(), single.names.end(), both.names.begin()));
  const auto oz = std::find(both.names.begin(), both.names.end(), "scc-oz-module-inliner");
  ASSERT_NE(oz, both.names.end());
  const auto ozIndex = static_cast<std::int64_t>(oz - both.names.begin());
  EXPECT_GE(ozIndex, static_cast<std::int64_t>(single.names.size()));

  auto plain = std::move(c.client->startSession(llvmOptions(benchUri("bfs"))).value());
  EXPECT_FALSE(plain->step({Value(ozIndex)}, std::vector<std::string>{}).ok());
  const std::int64_t gvn = passIndex(*plain, "gvn");
  ASSERT_TRUE(plain->step({Value(gvn)}, std::vector<std::string>{}).ok());

  client::SessionOptions options = llvmOptions(benchUri("bfs"));
  options.actionSpace = "PassesAndPipelines";
  auto wide = std::move(c.client->startSession(options).value());
  ASSERT_TRUE(wide->step({Value(gvn)}, std::vector<std::string>{}).ok());
  EXPECT_EQ(sha1(*wide), sha1(*plain));
  auto fork = wide->fork();
  ASSERT_TRUE(fork.ok()) << fork.status().toString();
  auto r = (*fork)->step({Value(ozIndex)}, std::vector<std::string>{});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_FALSE(r->actionHadNoEffect);
}

TEST(LlvmSessionTest, StepsObservationsNoEffectAndRewards) {
  Cluster c = startCluster();
  auto options = llvmOptions(benchUri("crc32"));
  options.observations = {"IrInstructionCount", "IrSha1"};
  auto started = c.client->startSession(options);
  ASSERT_TRUE(started.ok()) << started.status().toString();
  auto& s = **started;
  const std::int64_t initial = s.initialObservations().at(0).as<std::int64_t>();
  EXPECT_GT(initial, 100);
  EXPECT_EQ(intObs(s, "IrInstructionCountO0"), initial);

  // mem2reg on unoptimized clang output always changes the IR and shrinks it.
  const std::vector<std::string> obs = {"IrSha1", "IrInstructionCount", "Reward:IrInstructionCount",
                                        "Reward:IrInstructionCountOz"};
  std::string before = sha1(s);
  auto first = s.step({Value(passIndex(s, "mem2reg"))}, obs);
  ASSERT_TRUE(first.ok()) << first.status().toString();
  EXPECT_FALSE(first->actionHadNoEffect);
  EXPECT_NE(first->observations[0].as<std::string>(), before);
  const std::int64_t afterCount = first->observations[1].as<std::int64_t>();
  EXPECT_LT(afterCount, initial);
  EXPECT_DOUBLE_EQ(first->observations[2].as<double>(), double(initial - afterCount));
  const double ozNorm =
      double(std::max<std::int64_t>(initial - intObs(s, "IrInstructionCountOz"), 1));
  EXPECT_DOUBLE_EQ(first->observations[3].as<double>(), double(initial - afterCount) / ozNorm);

  // Again: no effect, exactly (same text), and a zero reward.
  auto second = s.step({Value(passIndex(s, "mem2reg"))}, obs);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->actionHadNoEffect);
  EXPECT_EQ(second->observations[0], first->observations[0]);
  EXPECT_DOUBLE_EQ(second->observations[2].as<double>(), 0.0);

  // The flag agrees with the text for a run of random passes.
  std::mt19937 rng(7);
  const auto passes = static_cast<std::int64_t>(s.spaces().actionSpaces[0].names.size());
  std::string previous = first->observations[0].as<std::string>();
  for (int i = 0; i < 25; ++i) {
    auto r = s.step({Value(std::int64_t(rng() % passes))}, std::vector<std::string>{"IrSha1"});
    ASSERT_TRUE(r.ok()) << r.status().toString();
    const std::string now = r->observations[0].as<std::string>();
    EXPECT_EQ(r->actionHadNoEffect, now == previous) << "step " << i;
    previous = now;
  }

  // The rest of the observations have the advertised shapes.
  auto all = s.step({}, std::vector<std::string>{"InstCount", "Autophase", "AutophaseDict", "Ir",
                                                 "Bitcode", "ObjectTextSizeBytes"});
  ASSERT_TRUE(all.ok()) << all.status().toString();
  EXPECT_EQ(all->observations[0].as<Int64Tensor>().values.size(), 70u);
  EXPECT_EQ(all->observations[1].as<Int64Tensor>().values.size(), 56u);
  EXPECT_EQ(all->observations[2].as<ValueDict>().size(), 56u);
  EXPECT_NE(all->observations[3].as<std::string>().find("define"), std::string::npos);
  EXPECT_GT(all->observations[4].as<Bytes>().data.size(), 100u);
  EXPECT_GT(all->observations[5].as<std::int64_t>(), 0);
}

TEST(LlvmSessionTest, TextSizeRewardsStartFromTheUnoptimizedBenchmark) {
  Cluster c = startCluster();
  auto s = std::move(c.client->startSession(llvmOptions(benchUri("adler32"))).value());
  const std::int64_t o0 = intObs(*s, "ObjectTextSizeO0");
  EXPECT_EQ(intObs(*s, "ObjectTextSizeBytes"), o0);
  auto r = s->step({Value(passIndex(*s, "mem2reg"))},
                   std::vector<std::string>{"ObjectTextSizeBytes", "Reward:ObjectTextSizeBytes",
                                            "Reward:ObjectTextSizeBytes"});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  const std::int64_t now = r->observations[0].as<std::int64_t>();
  EXPECT_DOUBLE_EQ(r->observations[1].as<double>(), double(o0 - now));
  EXPECT_DOUBLE_EQ(r->observations[2].as<double>(), 0.0);  // since the previous observation
}

TEST(LlvmSessionTest, ForkStepsIndependentlyWithItsOwnRewardState) {
  Cluster c = startCluster();
  auto parent = std::move(c.client->startSession(llvmOptions(benchUri("fnv_hash"))).value());
  ASSERT_TRUE(
      parent->step({Value(passIndex(*parent, "mem2reg"))}, std::vector<std::string>{}).ok());
  const std::string parentSha = sha1(*parent);
  const std::int64_t parentCount = intObs(*parent, "IrInstructionCount");
  auto fork = parent->fork();
  ASSERT_TRUE(fork.ok()) << fork.status().toString();
  EXPECT_EQ(sha1(**fork), parentSha);
  auto r = (*fork)->step(
      {Value(passIndex(**fork, "instcombine"))},
      std::vector<std::string>{"IrSha1", "IrInstructionCount", "Reward:IrInstructionCount"});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_FALSE(r->actionHadNoEffect);
  EXPECT_NE(r->observations[0].as<std::string>(), parentSha);
  // The fork's first reward observation counts from the benchmark's start, as
  // the parent's would: the reward state was copied, not reset.
  const std::int64_t initial = intObs(*parent, "IrInstructionCountO0");
  EXPECT_DOUBLE_EQ(r->observations[2].as<double>(),
                   double(initial - r->observations[1].as<std::int64_t>()));
  EXPECT_EQ(sha1(*parent), parentSha);  // untouched by the fork's step
  EXPECT_EQ(intObs(*parent, "IrInstructionCount"), parentCount);
}

TEST(LlvmSessionTest, SecondStartIsServedFromTheParsedModuleCache) {
  Cluster c = startCluster();
  const std::string prefix = "service.parsed_module_cache.";
  auto counters = [&] { return *c.client->workerParameter(c.worker, prefix + "get_counters", ""); };
  auto a = c.client->startSession(llvmOptions(benchUri("sieve")));
  ASSERT_TRUE(a.ok()) << a.status().toString();
  EXPECT_EQ(counters(), "hits=0 misses=1 evictions=0 inserts=1");
  auto b = c.client->startSession(llvmOptions(benchUri("sieve")));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(counters(), "hits=1 misses=1 evictions=0 inserts=1");
  EXPECT_EQ(sha1(**a), sha1(**b));
  EXPECT_EQ(*c.client->workerParameter(c.worker, prefix + "get_size", ""), "1");
  EXPECT_GT(std::stoll(*c.client->workerParameter(c.worker, prefix + "get_size_in_bytes", "")), 0);
  // A bound of 1 byte keeps nothing: the next start parses again.
  EXPECT_EQ(*c.client->workerParameter(c.worker, prefix + "set_max_size_in_bytes", "1"), "1");
  EXPECT_EQ(*c.client->workerParameter(c.worker, prefix + "get_size", ""), "0");
  ASSERT_TRUE(c.client->startSession(llvmOptions(benchUri("sieve"))).ok());
  EXPECT_EQ(counters(), "hits=1 misses=2 evictions=1 inserts=1");
  auto bad = c.client->workerParameter(c.worker, prefix + "set_max_size_in_bytes", "lots");
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
}

TEST(LlvmSessionTest, AModuleIsWalkedForItsGraphOnceForEverySession) {
  Cluster c = startCluster();
  const std::string prefix = "service.program_graph_cache.";
  auto counters = [&] { return *c.client->workerParameter(c.worker, prefix + "get_counters", ""); };
  auto graph = [](client::Session& s) {
    auto r = s.step({}, std::vector<std::string>{"Programl"});
    EXPECT_TRUE(r.ok()) << r.status().toString();
    return r.ok() ? r->observations.at(0).as<Bytes>().data : std::string();
  };
  auto a = c.client->startSession(llvmOptions(benchUri("kmp")));
  auto b = c.client->startSession(llvmOptions(benchUri("kmp")));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string first = graph(**a);
  EXPECT_EQ(counters(), "hits=0 misses=1 evictions=0 inserts=1");
  // Another session on the same module: the same graph, no walk.
  EXPECT_TRUE(graph(**b) == first);
  EXPECT_EQ(counters(), "hits=1 misses=1 evictions=0 inserts=1");
  // Both take the same step: the second finds the graph of the new module.
  ASSERT_TRUE((*a)->step({Value(passIndex(**a, "mem2reg"))}, std::vector<std::string>{}).ok());
  ASSERT_TRUE((*b)->step({Value(passIndex(**b, "mem2reg"))}, std::vector<std::string>{}).ok());
  const std::string after = graph(**a);
  EXPECT_FALSE(after == first);
  EXPECT_TRUE(graph(**b) == after);
  EXPECT_EQ(counters(), "hits=2 misses=2 evictions=0 inserts=2");
  // An operator's bound, lowered by a client of a tuning worker, keeps nothing.
  EXPECT_EQ(*c.client->workerParameter(c.worker, prefix + "set_max_size", "0"), "0");
  EXPECT_TRUE(graph(**a) == after);  // the state's own cache still has it
}

TEST(LlvmSessionTest, DatasetsAndBenchmarksAreListable) {
  Cluster c = startCluster();
  auto datasets = c.client->workerParameter(c.worker, "llvm.datasets", "");
  ASSERT_TRUE(datasets.ok()) << datasets.status().toString();
  EXPECT_NE(datasets->find("benchmark://kiln-bench-v0\t"), std::string::npos) << *datasets;
  EXPECT_NE(datasets->find("generator://csmith-v0\tinf\t"), std::string::npos) << *datasets;
  auto uris = c.client->workerParameter(c.worker, "llvm.benchmarks", "benchmark://kiln-bench-v0:3");
  ASSERT_TRUE(uris.ok()) << uris.status().toString();
  EXPECT_EQ(std::count(uris->begin(), uris->end(), '\n'), 3);
  EXPECT_EQ(uris->rfind("benchmark://kiln-bench-v0/", 0), 0u);
  auto unknown = c.client->workerParameter(c.worker, "llvm.benchmarks", "benchmark://nope-v0");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument) << unknown.status().toString();
  EXPECT_NE(unknown.status().message().find("nope-v0"), std::string::npos);
  EXPECT_EQ(c.client->workerParameter(c.worker, "llvm.benchmarks", "").status().code(),
            ErrorCode::kInvalidArgument);
  // The client helpers parse the same replies.
  auto listed = client::listDatasets(*c.client);
  ASSERT_TRUE(listed.ok()) << listed.status().toString();
  auto bench = std::find_if(listed->begin(), listed->end(), [](const client::DatasetListing& d) {
    return d.name == "benchmark://kiln-bench-v0";
  });
  ASSERT_NE(bench, listed->end());
  EXPECT_GE(bench->size.value_or(0), 20);
  auto two = client::listBenchmarks(*c.client, "benchmark://kiln-bench-v0", 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
}

TEST(LlvmSessionTest, BadBenchmarksFailCleanlyWhileAnotherSessionKeepsStepping) {
  Cluster c = startCluster(/*maxBenchmarkBytes=*/1 << 20);
  auto good = std::move(c.client->startSession(llvmOptions(benchUri("crc32"))).value());
  const std::int64_t pass = passIndex(*good, "sroa");
  const std::string bitcode = readFile(benchPath("crc32"));
  ASSERT_GT(bitcode.size(), 1000u);

  std::mt19937 rng(3);
  std::string randomBytes(4096, '\0');
  for (char& ch : randomBytes) ch = static_cast<char>(rng());
  struct Bad {
    std::string what;
    std::string bytes;
    std::string expect;  // part of the message
  };
  const std::vector<Bad> cases = {
      {"random", randomBytes, "not valid LLVM IR"},
      {"truncated", bitcode.substr(0, bitcode.size() / 2), "bitcode"},
      {"syntax", "define i32 @f() {\n  ret i32 %undefined_value\n}\n", "undefined_value"},
      {"oversize", std::string((1 << 20) + 1, ';'), "over the limit"},
      {"invalid-ir", "define i32 @f() {\n  ret i64 0\n}\n", "f"},
  };
  for (const Bad& bad : cases) {
    auto options = llvmOptions("inline://bad/" + bad.what);
    options.program = bad.bytes;
    auto session = c.client->startSession(options);
    ASSERT_FALSE(session.ok()) << bad.what;
    EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument) << bad.what;
    EXPECT_NE(session.status().message().find(bad.expect), std::string::npos)
        << bad.what << ": " << session.status().message();
    auto step = good->step({Value(pass)}, std::vector<std::string>{"IrInstructionCount"});
    ASSERT_TRUE(step.ok()) << "after " << bad.what << ": " << step.status().toString();
  }
  // A missing file and an unknown benchmark name are not-found, not a crash:
  // the cluster listens on loopback, so it reads the current directory.
  auto missing = c.client->startSession(
      llvmOptions("file://" + (std::filesystem::current_path() / "no-such-kiln-x.bc").string()));
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound) << missing.status().toString();
  // A file outside the allowed directories is refused whether it exists or not.
  auto outside = c.client->startSession(llvmOptions("file:///nonexistent/kiln/x.bc"));
  EXPECT_EQ(outside.status().code(), ErrorCode::kPermissionDenied) << outside.status().toString();
  auto unknown = c.client->startSession(llvmOptions(benchUri("no-such-program")));
  EXPECT_FALSE(unknown.ok());
  // Inline .ll text that is valid works, and the worker still serves.
  auto options = llvmOptions("inline://good/f.ll");
  options.program = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n";
  auto text = c.client->startSession(options);
  ASSERT_TRUE(text.ok()) << text.status().toString();
  EXPECT_EQ(intObs(**text, "IrInstructionCount"), 2);
  EXPECT_TRUE(good->step({Value(pass)}, std::vector<std::string>{}).ok());
}

// Issue 48: a module's own assembly made LLVM's assembler echo lines of any
// file the worker could read into the compile error (module asm and inline
// asm, at the first code generation), .incbin told whether a file exists
// and its size. Refused where the module enters, before LLVM reads a file.
TEST(LlvmSessionTest, ModulesThatReachForHostFilesAreRefusedAndTellNothing) {
  Cluster c = startCluster();
  char pattern[] = "/tmp/kiln-secret-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  // Removed on every way out of the test, a failed assertion included.
  std::unique_ptr<const std::filesystem::path, void (*)(const std::filesystem::path*)> removed(
      &dir, [](const std::filesystem::path* path) {
        std::error_code ignored;
        std::filesystem::remove_all(*path, ignored);
      });
  const std::string secret = "kiln_secret_line_5b1d must never reach a client";
  std::ofstream(dir / "secret.s") << secret << "\n";
  const std::string file = (dir / "secret.s").string();
  const std::string triple = "target triple = \"x86_64-unknown-linux-gnu\"\n";
  const std::string main = "define i32 @main() {\n  ret i32 0\n}\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"module asm .include", triple + "module asm \".include \\22" + file + "\\22\"\n" + main},
      {"module asm .incbin", triple + "module asm \".incbin \\22" + file + "\\22\"\n" + main},
      {"module asm .incbin of a missing file",
       triple + "module asm \".incbin \\22" + file + ".missing\\22\"\n" + main},
      {"inline asm .include",
       triple + "define i32 @main() {\n  call void asm sideeffect \".include \\22" + file +
           "\\22\", \"\"()\n  ret i32 0\n}\n"},
      {"dependent library",
       triple + main + "!llvm.dependent-libraries = !{!0}\n!0 = !{!\"" + file + "\"}\n"},
  };
  for (const auto& [what, program] : cases) {
    SCOPED_TRACE(what);
    auto options = llvmOptions("inline://hostile/" + std::to_string(program.size()));
    options.program = program;
    auto session = c.client->startSession(options);
    Status status = session.ok() ? okStatus() : session.status();
    if (session.ok()) {
      auto observed = (*session)->step({}, std::vector<std::string>{"ObjectTextSizeBytes"});
      status = observed.ok() ? okStatus() : observed.status();
    }
    ASSERT_FALSE(status.ok()) << "the module was compiled";
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.toString();
    EXPECT_NE(status.message().find("kiln refuses it"), std::string::npos) << status.toString();
    EXPECT_EQ(status.message().find(secret), std::string::npos) << status.toString();
  }
}

// Issue 48: the bound on the data a module makes the code generator write
// was a constant; it is the operator's --max-module-data-bytes now, and a
// module over a lowered bound is refused naming it, before any compile.
TEST(LlvmSessionTest, AModuleOverTheOperatorsDataLimitIsRefusedNamingTheFlag) {
  Cluster c = startCluster(
      [](LocalClusterOptions& options) { options.worker.limits.maxModuleDataBytes = 4096; });
  const std::string triple = "target triple = \"x86_64-unknown-linux-gnu\"\n";
  const std::string main = "define i32 @main() {\n  ret i32 0\n}\n";
  auto big = llvmOptions("inline://data/big.ll");
  // A constant goes to .rodata: its bytes are in the object, zeros or not.
  big.program = triple + "@g = constant [8192 x i8] zeroinitializer\n" + main;
  auto refused = c.client->startSession(big);
  ASSERT_FALSE(refused.ok()) << "a module over the limit was accepted";
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("--max-module-data-bytes"), std::string::npos)
      << refused.status().toString();
  EXPECT_NE(refused.status().message().find("limit of 4096 bytes"), std::string::npos)
      << refused.status().toString();
  auto small = llvmOptions("inline://data/small.ll");
  small.program = triple + "@g = constant [1024 x i8] zeroinitializer\n" + main;
  auto accepted = c.client->startSession(small);
  ASSERT_TRUE(accepted.ok()) << accepted.status().toString();
  EXPECT_TRUE((*accepted)->step({}, std::vector<std::string>{"ObjectTextSizeBytes"}).ok());
}

}  // namespace
}  // namespace kiln::llvm_session
