// runGuarded must turn a crash inside LLVM work into a compile error, on any
// thread and every time, so that one bad pass never ends the worker.
#include "llvmenv/crash_guard.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <thread>

namespace kiln::llvmenv {
namespace {

// A store into the first page, which Linux never maps: a real SIGSEGV. Not
// through nullptr, which UBSan would report as undefined behaviour first.
void crashOnPurpose() {
  // Volatile, so that the compiler neither warns about nor folds the address.
  volatile std::uintptr_t address = 64;
  auto* nowhere = reinterpret_cast<volatile int*>(address);
  *nowhere = 1;
}

TEST(CrashGuardTest, ASegfaultBecomesACompileError) {
  Status status = runGuarded("a pass", crashOnPurpose);
  EXPECT_EQ(status.code(), ErrorCode::kCompileError);
  EXPECT_NE(status.message().find("signal 11"), std::string::npos) << status.message();
}

TEST(CrashGuardTest, CrashesOnOtherThreadsAreCaughtEveryTime) {
  for (int round = 0; round < 3; ++round) {
    Status status;
    std::thread worker([&] { status = runGuarded("a pass", crashOnPurpose); });
    worker.join();
    EXPECT_EQ(status.code(), ErrorCode::kCompileError) << "round " << round;
  }
  EXPECT_TRUE(runGuarded("a pass", [] {}).ok());
}

TEST(CrashGuardTest, AbortBecomesACompileError) {
  Status status = runGuarded("a pass", [] { std::raise(SIGABRT); });
  EXPECT_EQ(status.code(), ErrorCode::kCompileError);
}

}  // namespace
}  // namespace kiln::llvmenv
