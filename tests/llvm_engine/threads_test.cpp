// States in different LLVMContexts can be stepped on different threads at the
// same time and give the same results as sequential stepping.
#include <thread>

#include "tests/llvm_engine/test_support.h"

namespace kiln::llvm_engine {
namespace {

using testing::loadBenchmark;
using testing::passIndex;

std::string runSequence(ModuleState& state) {
  for (const char* pass : {"sroa", "instcombine", "gvn", "licm", "loop-unroll", "simplifycfg",
                           "inline", "globaldce"}) {
    auto outcome = state.applyPass(passIndex(pass));
    if (!outcome.ok()) return "error: " + outcome.status().toString();
  }
  auto text = state.objectTextSizeBytes();  // codegen from several threads too
  if (!text.ok()) return "error: " + text.status().toString();
  return *state.irSha1();
}

TEST(ThreadsTest, ParallelStatesMatchSequential) {
  std::vector<std::string> programs = testing::benchmarkNames();
  std::vector<std::string> expected;
  for (const std::string& p : programs) expected.push_back(runSequence(*loadBenchmark(p)));

  std::vector<std::unique_ptr<ModuleState>> states;
  for (const std::string& p : programs) states.push_back(loadBenchmark(p));
  std::vector<std::string> actual(programs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < states.size(); ++i) {
    threads.emplace_back([&, i] { actual[i] = runSequence(*states[i]); });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < programs.size(); ++i) {
    EXPECT_EQ(actual[i], expected[i]) << programs[i];
    EXPECT_FALSE(actual[i].starts_with("error")) << actual[i];
  }
}

}  // namespace
}  // namespace kiln::llvm_engine
