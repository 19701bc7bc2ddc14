// The policy that decides whether the worker's loop polls for a moment after
// a direct-channel reply instead of sleeping at once.
#include "worker/reply_spin.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using std::chrono::microseconds;

TEST(ReplySpinTest, AZeroWindowNeverPolls) {
  ReplySpin spin(Duration::zero());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(spin.afterReply(), Duration::zero());
    spin.outcome(true);
  }
}

TEST(ReplySpinTest, PollsAfterEveryReplyWhileTheClientAnswersWithinTheWindow) {
  ReplySpin spin(microseconds(50));
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(spin.afterReply(), microseconds(50)) << "reply " << i;
    spin.outcome(true);
  }
}

TEST(ReplySpinTest, ASlowClientIsPolledForOnlyOnEveryProbeAfterItMissesInARow) {
  ReplySpin spin(microseconds(50));
  for (int i = 0; i < ReplySpin::kMissesBeforeBackOff; ++i) {
    ASSERT_EQ(spin.afterReply(), microseconds(50));
    spin.outcome(false);
  }
  // Backed off: one reply in kProbeEvery polls, to notice a client that sped up.
  int polls = 0;
  for (int i = 0; i < 10 * ReplySpin::kProbeEvery; ++i) {
    if (spin.afterReply() > Duration::zero()) {
      ++polls;
      spin.outcome(false);
    }
  }
  EXPECT_EQ(polls, 10);
}

TEST(ReplySpinTest, AProbeThatFindsInputEndsTheBackOff) {
  ReplySpin spin(microseconds(50));
  for (int i = 0; i < ReplySpin::kMissesBeforeBackOff; ++i) {
    spin.afterReply();
    spin.outcome(false);
  }
  int skipped = 0;
  while (spin.afterReply() == Duration::zero()) ++skipped;
  EXPECT_EQ(skipped, ReplySpin::kProbeEvery - 1);
  spin.outcome(true);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(spin.afterReply(), microseconds(50));
    spin.outcome(i % 2 == 0);  // misses that do not come in a row keep it polling
  }
}

}  // namespace
}  // namespace kiln
