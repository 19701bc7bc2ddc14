// A client may only lower the operator's sandbox limits, one named key at a time.
#include <kiln/sandbox_limits.h>

#include <gtest/gtest.h>

namespace kiln::sandbox {
namespace {

TEST(SandboxLimitsTest, AClientLowersOneLimitAndNeverRaisesIt) {
  SandboxLimits ceiling;
  auto lower = lowered(ceiling, ceiling, "sandbox.wall_ms", "250");
  ASSERT_TRUE(lower.ok()) << lower.status().toString();
  EXPECT_EQ(lower->wallTime, std::chrono::milliseconds(250));
  EXPECT_EQ(lower->memoryBytes, ceiling.memoryBytes);
  auto memory = lowered(*lower, ceiling, "sandbox.memory_mb", "64");
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(memory->memoryBytes, std::uint64_t{64} << 20);
  EXPECT_EQ(memory->wallTime, std::chrono::milliseconds(250));  // the earlier lowering stays

  auto above = lowered(ceiling, ceiling, "sandbox.processes", "100000");
  EXPECT_EQ(above.status().code(), ErrorCode::kPermissionDenied);
  EXPECT_NE(above.status().message().find("--sandbox-processes"), std::string::npos)
      << above.status().message();
  EXPECT_EQ(lowered(ceiling, ceiling, "sandbox.output_kb", "-1").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(lowered(ceiling, ceiling, "sandbox.output_kb", "0").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(lowered(ceiling, ceiling, "sandbox.scratch_mb", "12abc").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(lowered(ceiling, ceiling, "sandbox.network", "1").status().code(),
            ErrorCode::kNotFound);
}

TEST(SandboxLimitsTest, TheOperatorsLimitsAreCheckedAtStart) {
  SandboxLimits limits;
  EXPECT_TRUE(checkLimits(limits).ok());
  limits.processes = 0;
  auto bad = checkLimits(limits);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--sandbox-processes"), std::string::npos);
  limits = {};
  limits.wallTime = std::chrono::hours(2);
  EXPECT_EQ(checkLimits(limits).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(describe(SandboxLimits{}),
            "10000 ms, 1024 MiB, 32 processes, 64 KiB of output, 64 MiB of scratch");
}

}  // namespace
}  // namespace kiln::sandbox
