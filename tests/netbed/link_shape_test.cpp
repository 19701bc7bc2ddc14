// The emulated links' policy (bench/link_shape.h) without taps or clocks:
// the shape's grammar, delay and jitter without reordering, loss, cuts, and
// a learning switch's forwarding.
#include "bench/link_shape.h"

#include <gtest/gtest.h>

namespace kiln::bench {
namespace {

using namespace std::chrono_literals;

TEST(LinkShapeTest, ParsesDelayJitterAndLossAndRefusesTheRest) {
  auto shape = parseLinkShape("200 20 0.01");
  ASSERT_TRUE(shape.ok()) << shape.status().toString();
  EXPECT_EQ(shape->delay, 200us);
  EXPECT_EQ(shape->jitter, 20us);
  EXPECT_DOUBLE_EQ(shape->loss, 0.01);
  for (const char* bad : {"", "200", "200 20", "-1 0 0", "0 0 1.5", "0 0 nan", "1 2 0 extra",
                          "x y z", "20000000 0 0"}) {
    EXPECT_EQ(parseLinkShape(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(LinkTimingTest, DelaysByTheShapeAndNeverReordersAPairsFrames) {
  LinkTiming timing(3, LinkShape{1000us, 0us, 0}, 1);
  const TimePoint now{};
  EXPECT_EQ(*timing.departure(0, 1, now), now + 1000us);
  timing.setShape(LinkShape{1000us, 500us, 0});
  TimePoint last{};
  for (int i = 0; i < 1000; ++i) {
    const TimePoint arrived = now + std::chrono::microseconds(i);
    const TimePoint leaves = *timing.departure(0, 2, arrived);
    EXPECT_GE(leaves, arrived + 1000us);
    EXPECT_LE(leaves, std::max(last, arrived + 1500us));
    EXPECT_GE(leaves, last) << "frame " << i << " overtook the one before";
    last = leaves;
  }
}

TEST(LinkTimingTest, LosesFramesAtItsRateAndEverythingOverACutCable) {
  LinkTiming timing(2, LinkShape{0us, 0us, 0.25}, 7);
  int lost = 0;
  for (int i = 0; i < 10000; ++i) lost += timing.departure(0, 1, TimePoint{}) ? 0 : 1;
  EXPECT_GT(lost, 2200);
  EXPECT_LT(lost, 2800);
  timing.setShape(LinkShape{});
  timing.setCut(1, true);
  EXPECT_FALSE(timing.departure(0, 1, TimePoint{}).has_value());
  EXPECT_FALSE(timing.departure(1, 0, TimePoint{}).has_value());
  timing.setCut(1, false);
  EXPECT_TRUE(timing.departure(1, 0, TimePoint{}).has_value());
}

std::vector<std::uint8_t> frame(std::uint8_t to, std::uint8_t from) {
  std::vector<std::uint8_t> bytes(60, 0);
  bytes[5] = to;  // locally administered unicast addresses 02:00:00:00:00:xx
  bytes[0] = 2;
  bytes[6] = 2;
  bytes[11] = from;
  return bytes;
}

TEST(LearningSwitchTest, FloodsTheUnknownAndLearnsWhereAddressesLive) {
  LearningSwitch ports(3);
  EXPECT_EQ(ports.destinations(0, frame(0xb, 0xa)), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(ports.destinations(1, frame(0xa, 0xb)), (std::vector<unsigned>{0}));
  EXPECT_EQ(ports.destinations(0, frame(0xb, 0xa)), (std::vector<unsigned>{1}));
  EXPECT_TRUE(ports.destinations(1, frame(0xb, 0xb)).empty()) << "a frame back to its own port";
  std::vector<std::uint8_t> broadcast = frame(0xff, 0xa);
  std::fill(broadcast.begin(), broadcast.begin() + 6, 0xff);
  EXPECT_EQ(ports.destinations(0, broadcast), (std::vector<unsigned>{1, 2}));
  EXPECT_TRUE(ports.destinations(0, std::vector<std::uint8_t>(10, 0)).empty());
  EXPECT_TRUE(ports.destinations(5, frame(0xb, 0xa)).empty()) << "no such port";
}

}  // namespace
}  // namespace kiln::bench
