// What `kiln eval` concludes from the Validation observation (pure): valid
// with the inputs compared, invalid with the first difference, "verified
// only" when there is nothing to compare with, and an error when the state
// could not be checked at all.
#include "tools/eval/validation_verdict.h"

#include <gtest/gtest.h>

namespace kiln::eval {
namespace {

Result<std::string> observed(std::string json) { return json; }

TEST(ValidationVerdict, NoErrorsOnEveryInputIsValid) {
  auto verdict =
      judgeValidation(observed(R"({"valid": true, "inputs": 3, "asan": false, "errors": []})"));
  ASSERT_TRUE(verdict.ok()) << verdict.status().toString();
  EXPECT_EQ(verdict->validity, Validity::kValid);
  EXPECT_EQ(verdict->inputs, 3u);
  EXPECT_TRUE(verdict->detail.empty());
}

TEST(ValidationVerdict, ADifferenceIsInvalidAndNamesTheFirstOne) {
  // -O0 failing on one input leaves that input out; the optimized program's
  // own difference on another makes the state invalid.
  auto verdict = judgeValidation(observed(
      R"({"valid": false, "inputs": 2, "asan": false, "errors": [)"
      R"({"kind": "reference-failed", "input": "#0", "message": "-O0 crashed", "evidence": ""},)"
      R"({"kind": "output", "input": "#1", "message": "stdout differs at byte 4", "evidence": "x"}]})"));
  ASSERT_TRUE(verdict.ok()) << verdict.status().toString();
  EXPECT_EQ(verdict->validity, Validity::kInvalid);
  EXPECT_EQ(verdict->inputs, 2u);
  EXPECT_EQ(verdict->detail, "output: stdout differs at byte 4 (input #1)");
}

TEST(ValidationVerdict, NothingToCompareWithIsVerifiedOnly) {
  auto reference = judgeValidation(observed(
      R"({"valid": false, "inputs": 1, "asan": false, "errors": [)"
      R"({"kind": "reference-failed", "input": "", "message": "-O0 timed out", "evidence": ""}]})"));
  ASSERT_TRUE(reference.ok()) << reference.status().toString();
  EXPECT_EQ(reference->validity, Validity::kVerifiedOnly);
  EXPECT_EQ(reference->detail, "reference-failed: -O0 timed out");

  // The session's word for a module that does not build as it came (no main).
  auto library = judgeValidation(Result<std::string>(
      invalidArgument("the benchmark as it came does not build, so there is nothing to validate "
                      "against: undefined reference to main")));
  ASSERT_TRUE(library.ok()) << library.status().toString();
  EXPECT_EQ(library->validity, Validity::kVerifiedOnly);
  EXPECT_NE(library->detail.find("undefined reference to main"), std::string::npos);
}

TEST(ValidationVerdict, AStateThatCouldNotBeCheckedIsAnError) {
  auto lost = judgeValidation(Result<std::string>(disconnected("the worker died")));
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), ErrorCode::kDisconnected);
  for (const char* bad : {"", "not json", R"({"valid": true})", R"({"inputs": "3", "errors": []})",
                          R"({"inputs": 1, "errors": {}})"}) {
    auto verdict = judgeValidation(observed(bad));
    EXPECT_FALSE(verdict.ok()) << bad;
  }
}

TEST(ValidationVerdict, EachValidityHasItsWord) {
  EXPECT_EQ(validityName(Validity::kValid), "valid");
  EXPECT_EQ(validityName(Validity::kVerifiedOnly), "verified-only");
  EXPECT_EQ(validityName(Validity::kInvalid), "invalid");
  EXPECT_EQ(validityName(Validity::kUnvalidated), "unvalidated");
}

}  // namespace
}  // namespace kiln::eval
