// Validation's verdicts from runs' evidence: each kind of difference named,
// with what was expected and what came.
#include "programs/runs/validation.h"

#include <gtest/gtest.h>

#include <csignal>

namespace kiln::runs {
namespace {

RunEvidence exited(int code, std::string out) {
  RunEvidence evidence;
  evidence.status.exitCode = code;
  evidence.stdoutBytes = out.size();
  evidence.stdoutText = std::move(out);
  return evidence;
}

RunSpec spec() { return kilnBenchRunSpec(); }

TEST(ValidationTest, TheSameBehaviourIsNoError) {
  EXPECT_TRUE(
      compareRun(spec(), 0, exited(0, "sieve 78498\n"), exited(0, "sieve 78498\n"), false).empty());
  EXPECT_TRUE(compareRun(spec(), 1, exited(2, ""), exited(2, ""), false).empty());
}

TEST(ValidationTest, DifferentOutputNamesTheFirstDifferentLine) {
  auto errors = compareRun(spec(), 2, exited(0, "a 1\nsieve 78498\n"),
                           exited(0, "a 1\nsieve 78497\n"), false);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].kind, ValidationError::Kind::kOutput);
  EXPECT_EQ(errors[0].input, "input 3 (args: 2)");
  EXPECT_EQ(errors[0].evidence, "line 2: expected \"sieve 78498\", got \"sieve 78497\"");
  // Output cut by the sandbox: the counts differ though the kept text is equal.
  RunEvidence longer = exited(0, "x");
  longer.stdoutBytes = 100;
  auto cut = compareRun(spec(), 0, exited(0, "x"), longer, false);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].evidence, "100 bytes of output, expected 1");
}

TEST(ValidationTest, ExitStatusCrashTimeoutAndSanitizerAreEachNamed) {
  auto status = compareRun(spec(), 0, exited(0, "ok\n"), exited(1, "ok\n"), false);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].kind, ValidationError::Kind::kExitStatus);
  EXPECT_EQ(status[0].evidence, "ok\n");  // no stderr: its output says why

  RunEvidence crashed;
  crashed.status.signal = SIGSEGV;
  auto crash = compareRun(spec(), 0, exited(0, "ok\n"), crashed, false);
  ASSERT_EQ(crash.size(), 1u);
  EXPECT_EQ(crash[0].kind, ValidationError::Kind::kCrash);
  EXPECT_NE(crash[0].message.find("SIGSEGV"), std::string::npos) << crash[0].message;

  RunEvidence forbidden;
  forbidden.status.signal = SIGSYS;
  EXPECT_NE(compareRun(spec(), 0, exited(0, ""), forbidden, false)[0].message.find("socket"),
            std::string::npos);

  RunEvidence hung;
  hung.timedOut = true;
  hung.status.signal = SIGKILL;
  EXPECT_EQ(compareRun(spec(), 0, exited(0, ""), hung, false)[0].kind,
            ValidationError::Kind::kTimeout);

  RunEvidence asan = exited(1, "");
  asan.stderrText =
      "=1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1\nREAD of size 4\n";
  auto report = compareRun(spec(), 0, exited(0, ""), asan, true);
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0].kind, ValidationError::Kind::kSanitizer);
  EXPECT_NE(report[0].evidence.find("heap-buffer-overflow"), std::string::npos);
  EXPECT_STREQ(kindName(report[0].kind), "sanitizer");
}

TEST(ValidationTest, AReferenceThatFailsIsSaidSo) {
  RunEvidence hung;
  hung.timedOut = true;
  auto errors = compareRun(spec(), 0, hung, exited(0, ""), false);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].kind, ValidationError::Kind::kReferenceFailed);
}

}  // namespace
}  // namespace kiln::runs
