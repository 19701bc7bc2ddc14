// runGuarded must turn a crash inside LLVM work into a compile error, on any
// thread and every time, so that one bad pass never ends the worker.
#include "llvmenv/crash_guard.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "common/sanitizers.h"

namespace kiln::llvmenv {
namespace {

void crashOnPurpose() {
  volatile int* nowhere = nullptr;
  *nowhere = 1;
}

TEST(CrashGuardTest, ASegfaultBecomesACompileError) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "the sanitizers own SIGSEGV";
  Status status = runGuarded("a pass", crashOnPurpose);
  EXPECT_EQ(status.code(), ErrorCode::kCompileError);
  EXPECT_NE(status.message().find("signal 11"), std::string::npos) << status.message();
}

TEST(CrashGuardTest, CrashesOnOtherThreadsAreCaughtEveryTime) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "the sanitizers own SIGSEGV";
  for (int round = 0; round < 3; ++round) {
    Status status;
    std::thread worker([&] { status = runGuarded("a pass", crashOnPurpose); });
    worker.join();
    EXPECT_EQ(status.code(), ErrorCode::kCompileError) << "round " << round;
  }
  EXPECT_TRUE(runGuarded("a pass", [] {}).ok());
}

TEST(CrashGuardTest, AbortBecomesACompileError) {
  if (kUnderAddressSanitizer) GTEST_SKIP() << "the sanitizers own SIGABRT";
  Status status = runGuarded("a pass", [] { std::raise(SIGABRT); });
  EXPECT_EQ(status.code(), ErrorCode::kCompileError);
}

}  // namespace
}  // namespace kiln::llvmenv
