// The policy that decides whether a side of a direct channel polls for a
// moment before it sleeps waiting for its peer.
#include "common/base/spin_before_sleep.h"

#include <gtest/gtest.h>

#include <thread>

namespace kiln {
namespace {

using std::chrono::microseconds;

TEST(SpinBeforeSleepTest, AZeroWindowNeverPolls) {
  SpinBeforeSleep spin(Duration::zero());
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(spin.next(), Duration::zero());
    spin.outcome(true);
  }
}

TEST(SpinBeforeSleepTest, PollsAfterEveryReplyWhileTheClientAnswersWithinTheWindow) {
  SpinBeforeSleep spin(microseconds(50));
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(spin.next(), microseconds(50)) << "reply " << i;
    spin.outcome(true);
  }
}

TEST(SpinBeforeSleepTest, ASlowClientIsPolledForOnlyOnEveryProbeAfterItMissesInARow) {
  SpinBeforeSleep spin(microseconds(50));
  for (int i = 0; i < SpinBeforeSleep::kMissesBeforeBackOff; ++i) {
    ASSERT_EQ(spin.next(), microseconds(50));
    spin.outcome(false);
  }
  // Backed off: one reply in kProbeEvery polls, to notice a client that sped up.
  int polls = 0;
  for (int i = 0; i < 10 * SpinBeforeSleep::kProbeEvery; ++i) {
    if (spin.next() > Duration::zero()) {
      ++polls;
      spin.outcome(false);
    }
  }
  EXPECT_EQ(polls, 10);
}

TEST(SpinBeforeSleepTest, AProbeThatFindsInputEndsTheBackOff) {
  SpinBeforeSleep spin(microseconds(50));
  for (int i = 0; i < SpinBeforeSleep::kMissesBeforeBackOff; ++i) {
    spin.next();
    spin.outcome(false);
  }
  int skipped = 0;
  while (spin.next() == Duration::zero()) ++skipped;
  EXPECT_EQ(skipped, SpinBeforeSleep::kProbeEvery - 1);
  spin.outcome(true);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(spin.next(), microseconds(50));
    spin.outcome(i % 2 == 0);  // misses that do not come in a row keep it polling
  }
}

TEST(FairQuickLooksTest, EveryEighthLookPollsEverything) {
  FairQuickLooks looks;
  int sinceFull = 0;
  for (int i = 0; i < 100; ++i) {
    if (looks.pollEverythingNow()) {
      EXPECT_EQ(sinceFull, FairQuickLooks::kEvery - 1) << "look " << i;
      sinceFull = 0;
    } else {
      ++sinceFull;
    }
    ASSERT_LT(sinceFull, FairQuickLooks::kEvery);
  }
}

TEST(FairQuickLooksTest, APeerThatAlwaysHasAMessageStillLetsTheLoopWait) {
  FairQuickLooks looks;
  int waits = 0;
  for (int turn = 1; turn <= 10 * FairQuickLooks::kEvery; ++turn) {
    if (looks.mustWait(true)) {
      ++waits;
      EXPECT_EQ(turn % FairQuickLooks::kEvery, 0) << "turn " << turn;
    }
  }
  EXPECT_EQ(waits, 10);
}

TEST(FairQuickLooksTest, ATurnWithoutAQuickTakeAlwaysWaitsAndStartsTheCountAgain) {
  FairQuickLooks looks;
  for (int i = 0; i < FairQuickLooks::kEvery - 2; ++i) EXPECT_FALSE(looks.mustWait(true));
  EXPECT_TRUE(looks.mustWait(false));
  for (int i = 0; i < FairQuickLooks::kEvery - 1; ++i) EXPECT_FALSE(looks.mustWait(true));
  EXPECT_TRUE(looks.mustWait(true));
}

TEST(PollForTest, ReturnsAsSoonAsThePeerAnswers) {
  int calls = 0;
  // Not the call right after a yield: that one may find what came while
  // another thread had this CPU.
  EXPECT_EQ(pollFor(std::chrono::seconds(5), [&] { return ++calls == 3 * kYieldEvery + 2; }),
            PollResult::kArrived);
  EXPECT_EQ(calls, 3 * kYieldEvery + 2);
}

TEST(PollForTest, AnAnswerFoundRightAfterAYieldThatRanAnotherThreadIsNotPollingThatPaid) {
  // A yield that took a while ran another thread on this CPU (the peer, when
  // the scheduler put both on one CPU): what the next look finds came then.
  int calls = 0;
  auto anotherThreadRan = [] { std::this_thread::sleep_for(4 * kYieldThatGaveWay); };
  EXPECT_EQ(
      pollFor(
          std::chrono::seconds(5), [&] { return ++calls == kYieldEvery + 1; }, anotherThreadRan),
      PollResult::kArrivedAfterGivingWay);
  EXPECT_EQ(calls, kYieldEvery + 1);
  // A look after that one, or after a yield that returned at once, is polling
  // that paid.
  calls = 0;
  EXPECT_EQ(
      pollFor(
          std::chrono::seconds(5), [&] { return ++calls == kYieldEvery + 2; }, anotherThreadRan),
      PollResult::kArrived);
  calls = 0;
  EXPECT_EQ(pollFor(
                std::chrono::seconds(5), [&] { return ++calls == kYieldEvery + 1; }, [] {}),
            PollResult::kArrived);
}

TEST(PollForTest, GivesUpOnceTheWindowPassed) {
  const auto start = std::chrono::steady_clock::now();
  int calls = 0;
  EXPECT_EQ(pollFor(std::chrono::milliseconds(2),
                    [&] {
                      ++calls;
                      return false;
                    }),
            PollResult::kTimedOut);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(2));
  EXPECT_LT(took, std::chrono::seconds(2));  // bounded, however loaded the machine
  EXPECT_EQ(calls % kYieldEvery, 0);         // the window is checked every kYieldEvery-th call
}

}  // namespace
}  // namespace kiln
