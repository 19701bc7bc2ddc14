// A corpus module's own flags (.cmd) through a worker: an mlgo-compile job's
// flagless compile step runs at the module's -O level (-Oz and -O2 give
// different code), hostile arguments are ignored and counted, a module
// without a .cmd needs flags, and mlgo-inline / mlgo-regalloc start with the
// module's target flags on opt and llc.
#include <gtest/gtest.h>

#include <fstream>

#include "programs/datasets/registry.h"
#include "tests/mlgo_session/session_test_support.h"

namespace kiln::mlgo_session::testing {
namespace {

using mlgo_channel::testing::TempDir;

void write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string args(std::initializer_list<std::string> list) {
  std::string out;
  for (const std::string& arg : list) out += arg + '\0';
  return out;
}

struct Job {
  Status status;
  std::int64_t size = 0;
  std::string log;
};

Job compileAndMeasure(client::Client& client, const std::string& uri) {
  client::SessionOptions options;
  options.sessionType = "mlgo-compile";
  options.benchmark = uri;
  auto session = client.startSession(options);
  if (!session.ok()) return {session.status()};
  auto done = (*session)->step(
      {Value(std::string(R"({"steps":[{"kind":"compile"},{"kind":"native-size"}]})"))},
      std::vector<std::string>{"NativeSize", "JobLog"});
  if (!done.ok()) return {done.status()};
  return {okStatus(), done->observations.at(0).as<std::int64_t>(),
          done->observations.at(1).as<std::string>()};
}

TEST(ModuleFlagsSessionTest, EachModuleCompilesWithItsOwnFlags) {
  TempDir corpus;
  auto registry = datasets::DatasetRegistry::create({});
  auto bytes = registry->resolve("benchmark://kiln-bench-v0/matmul");
  ASSERT_TRUE(bytes.ok()) << bytes.status().toString();
  write(corpus.path() / "corpus_description.json",
        R"({"modules": ["small", "fast", "hostile", "bare"]})");
  for (const char* module : {"small", "fast", "hostile", "bare"}) {
    write(corpus.path() / (std::string(module) + ".bc"), bytes->bytes);
  }
  write(corpus.path() / "small.cmd", args({"-cc1", "-triple", "x86_64-unknown-linux-gnu", "-Oz"}));
  write(corpus.path() / "fast.cmd",
        args({"clang", "-O2", "--target=x86_64-pc-linux-gnu", "-fPIC"}));
  write(corpus.path() / "hostile.cmd",
        args({"-load", "/nonexistent/evil.so", "-O2", "-o", "/nonexistent/out", "-mcpu=$(id)"}));

  OperatorSettings settings;
  settings.datasets = {{"flags", corpus.path()}};
  ClusterFixture fixture(2, HostLimits{}.compileMemoryBytes, settings);
  ASSERT_NE(fixture.client, nullptr);

  Job small = compileAndMeasure(*fixture.client, "benchmark://flags/small");
  ASSERT_TRUE(small.status.ok()) << small.status.toString();
  Job fast = compileAndMeasure(*fixture.client, "benchmark://flags/fast");
  ASSERT_TRUE(fast.status.ok()) << fast.status.toString();
  EXPECT_NE(small.log.find("module flags: -mtriple=x86_64-unknown-linux-gnu -Oz"),
            std::string::npos)
      << small.log;
  EXPECT_NE(fast.log.find("module flags: -mtriple=x86_64-pc-linux-gnu -O2"), std::string::npos)
      << fast.log;
  EXPECT_LT(small.size, fast.size) << "-Oz should give smaller code than -O2";

  Job hostile = compileAndMeasure(*fixture.client, "benchmark://flags/hostile");
  ASSERT_TRUE(hostile.status.ok()) << hostile.status.toString();
  EXPECT_NE(hostile.log.find("module flags: -O2\n"), std::string::npos) << hostile.log;
  EXPECT_NE(hostile.log.find("ignored (not on the allow-list): 5"), std::string::npos)
      << hostile.log;
  EXPECT_EQ(hostile.log.find("evil"), std::string::npos) << hostile.log;
  EXPECT_EQ(hostile.size, fast.size);  // the same -O2, no other effect

  Job bare = compileAndMeasure(*fixture.client, "benchmark://flags/bare");
  EXPECT_EQ(bare.status.code(), ErrorCode::kInvalidArgument) << bare.status.toString();
  EXPECT_NE(bare.status.message().find(".cmd"), std::string::npos) << bare.status.toString();

  for (const char* type : {"mlgo-inline", "mlgo-regalloc"}) {
    SCOPED_TRACE(type);
    client::SessionOptions options;
    options.sessionType = type;
    options.benchmark = "benchmark://flags/fast";
    auto session = fixture.client->startSession(options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    EXPECT_TRUE((*session)->end().ok());
  }
}

}  // namespace
}  // namespace kiln::mlgo_session::testing
