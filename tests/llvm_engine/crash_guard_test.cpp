// runGuarded must turn a crash inside LLVM work into a compile error, on any
// thread and every time, so that one bad pass never ends the worker.
#include "compilers/llvm_engine/crash_guard.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <thread>

#include "llvm/Support/ErrorHandling.h"

namespace kiln::llvm_engine {
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

TEST(CrashGuardTest, ACaughtCrashIsRecordedForTheProcess) {
  // The record is process-wide and never cleared (a damaged heap stays
  // damaged): whatever a test before this one caught, it holds a crash now.
  (void)runGuarded("the recorded pass", crashOnPurpose);
  std::optional<std::string> crash = firstCaughtCrash();
  ASSERT_TRUE(crash.has_value());
  EXPECT_NE(crash->find("signal"), std::string::npos) << *crash;
}

TEST(CrashGuardTest, AFatalErrorIsNotACrash) {
  // In a fresh process (a death test re-runs this binary for this test
  // alone), which has caught no signal: an orderly report_fatal_error must
  // not mark it damaged, a crash after it must.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto fatalThenCrash = [] {
    Status fatal = runGuarded("a pass", [] { llvm::report_fatal_error("bad input"); });
    if (fatal.code() != ErrorCode::kCompileError) std::_Exit(2);
    if (fatal.message().find("bad input") == std::string::npos) std::_Exit(3);
    if (firstCaughtCrash()) std::_Exit(4);
    (void)runGuarded("a pass", crashOnPurpose);
    std::_Exit(firstCaughtCrash() ? 0 : 5);
  };
  EXPECT_EXIT(fatalThenCrash(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln::llvm_engine
