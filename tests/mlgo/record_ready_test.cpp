// recordReadiness over hand-built streams: a record is "ready" only when all
// of its bytes are buffered, and anything the reader would reject or treat as
// the end is left to the reader (kOther) rather than waited for.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "mlgo/channel.h"
#include "mlgo/record_ready.h"
#include "tests/mlgo/test_support.h"

namespace kiln::mlgo {
namespace {

using testing::FakeCompilerThread;
using testing::in;
using testing::smallHeader;
using testing::smallRecord;
using testing::specJson;
using testing::TempDir;

ChannelHeader twoFeatures(bool withScore = false) {
  std::string line = "{\"features\":[" + specJson("a", "int64_t", {1}) + "," +
                     specJson("b", "float", {2}) + "]" +
                     (withScore ? ",\"score\":" + specJson("s", "float", {1}) : "") +
                     ",\"advice\":" + specJson("d", "int64_t", {1}) + "}";
  Result<ChannelHeader> header = parseHeader(line);
  EXPECT_TRUE(header.ok()) << header.status().toString();
  return std::move(header).value();
}

std::string observation(int index) {
  return "{\"observation\":" + std::to_string(index) + "}\n" + std::string(8 + 8, '\x01') + "\n";
}

RecordReadiness judge(std::string_view bytes, bool closed = false, bool withScore = false) {
  return recordReadiness(bytes, twoFeatures(withScore), 1024, closed);
}

TEST(RecordReadiness, WholeObservationIsReadyAndEveryShorterPrefixIsNot) {
  std::string record = "{\"context\":\"main\"}\n" + observation(0);
  EXPECT_EQ(judge(record), RecordReadiness::kObservation);
  for (std::size_t n = 0; n < record.size(); ++n) {
    EXPECT_EQ(judge(std::string_view(record).substr(0, n)), RecordReadiness::kIncomplete)
        << "prefix of " << n << " bytes";
  }
}

TEST(RecordReadiness, OutcomesAreSkippedOnlyWithAScore) {
  std::string outcome = "{\"outcome\":0}\n" + std::string(4, '\x02') + "\n";
  EXPECT_EQ(judge(outcome, false, true), RecordReadiness::kIncomplete);
  EXPECT_EQ(judge(outcome + observation(1), false, true), RecordReadiness::kObservation);
  EXPECT_EQ(judge(outcome + observation(1)), RecordReadiness::kOther);  // no score: a bad record
}

TEST(RecordReadiness, EndAndBrokenStreamsAreLeftToTheReader) {
  EXPECT_EQ(judge("", /*closed=*/true), RecordReadiness::kOther);
  EXPECT_EQ(judge(observation(0).substr(0, 10), /*closed=*/true), RecordReadiness::kOther);
  EXPECT_EQ(judge("not json\n"), RecordReadiness::kOther);
  EXPECT_EQ(judge("{\"observation\":\"x\"}\n"), RecordReadiness::kOther);
  EXPECT_EQ(judge(std::string(2000, 'x')), RecordReadiness::kOther);  // over the line limit
}

// The channel never waits in nextReadiness(): it reports a half-written
// record as incomplete, then ready once the rest arrives, and next() reads it.
TEST(RecordReadiness, ChannelReportsReadinessWithoutWaiting) {
  TempDir dir;
  std::promise<void> halfSeen;
  std::string record = smallRecord(0, 5, 1.0f, 2.0f, 3);
  {
    FakeCompilerThread fake(dir.path() / "chan", [&](FakeCompilerThread::Ends& ends) {
      ends.write(smallHeader() + record.substr(0, record.size() / 2));
      halfSeen.get_future().wait_for(std::chrono::seconds(10));
      ends.write(record.substr(record.size() / 2));
      (void)ends.readAdvice(8);
    });
    Result<InteractiveChannel> channel = InteractiveChannel::create(dir.path(), "chan");
    ASSERT_TRUE(channel.ok());
    ASSERT_TRUE(channel->connect(in(std::chrono::milliseconds(5000))).ok());
    EXPECT_GE(channel->observationFd(), 0);
    RecordReadiness seen = RecordReadiness::kIncomplete;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the half record arrives
    Result<RecordReadiness> half = channel->nextReadiness();
    ASSERT_TRUE(half.ok());
    EXPECT_EQ(*half, RecordReadiness::kIncomplete);
    halfSeen.set_value();
    for (int i = 0; i < 5000 && seen != RecordReadiness::kObservation; ++i) {
      seen = channel->nextReadiness().value();
      if (seen != RecordReadiness::kObservation) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    ASSERT_EQ(seen, RecordReadiness::kObservation);
    Result<std::optional<Observation>> next = channel->next(in(std::chrono::milliseconds(1)));
    ASSERT_TRUE(next.ok() && next->has_value()) << next.status().toString();
    EXPECT_EQ((*next)->features[0], Value(Int64Tensor{{1}, {5}}));
    EXPECT_EQ(channel->nextReadiness().status().code(), ErrorCode::kInvalidArgument);  // unanswered
    ASSERT_TRUE(
        channel->sendAdvice(Value(std::int64_t{0}), in(std::chrono::milliseconds(5000))).ok());
  }
}

}  // namespace
}  // namespace kiln::mlgo
