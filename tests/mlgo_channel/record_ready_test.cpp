// recordReadiness over hand-built streams: a record is "ready" only when all
// of its bytes are buffered, and anything the reader would reject or treat as
// the end is left to the reader (kOther) rather than waited for.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "compilers/mlgo_channel/channel.h"
#include "compilers/mlgo_channel/record_ready.h"
#include "compilers/mlgo_channel/record_stream.h"
#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
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

TEST(TakeBuffered, TakesAWholeObservationParsedOnceAndConsumesExactlyIt) {
  RecordReader reader(twoFeatures(), 1024);
  std::string first = "{\"context\":\"main\"}\n" + observation(0);
  std::string second = observation(1);
  std::string stream = first + second.substr(0, 20);
  BufferedObservation taken = reader.takeBuffered(stream, /*closed=*/false);
  ASSERT_EQ(taken.readiness, RecordReadiness::kObservation);
  ASSERT_TRUE(taken.observation.has_value());
  EXPECT_EQ(taken.consumed, first.size());
  EXPECT_EQ(taken.observation->index, 0);
  EXPECT_EQ(taken.observation->context, "main");
  EXPECT_EQ(taken.observation->tensors, std::string(16, '\x01'));
  EXPECT_EQ(decodeFeature(reader.header(), *taken.observation, 0).value(),
            Value(Int64Tensor{{1}, {0x0101010101010101}}));
  // The rest is a part of the next record: nothing is taken or consumed.
  std::string rest = stream.substr(taken.consumed);
  BufferedObservation part = reader.takeBuffered(rest, /*closed=*/false);
  EXPECT_EQ(part.readiness, RecordReadiness::kIncomplete);
  EXPECT_EQ(part.consumed, 0u);
  EXPECT_FALSE(part.observation.has_value());
  BufferedObservation whole = reader.takeBuffered(second, /*closed=*/false);
  ASSERT_TRUE(whole.observation.has_value());
  EXPECT_EQ(whole.observation->index, 1);
  EXPECT_EQ(whole.observation->context, "main");  // the context carries over
  EXPECT_EQ(whole.consumed, second.size());
}

TEST(TakeBuffered, AContextBeforeAnIncompleteObservationIsKeptForIt) {
  RecordReader reader(twoFeatures(), 1024);
  std::string stream = "{\"context\":\"g\"}\n" + observation(3);
  EXPECT_EQ(
      reader.takeBuffered(std::string_view(stream).substr(0, stream.size() - 1), false).readiness,
      RecordReadiness::kIncomplete);
  BufferedObservation taken = reader.takeBuffered(stream, false);
  ASSERT_TRUE(taken.observation.has_value());
  EXPECT_EQ(taken.observation->context, "g");
  EXPECT_EQ(taken.observation->index, 3);
}

// Whatever the scan refuses to take, next() reads from the same bytes and
// reports with the reader's own error.
TEST(TakeBuffered, BrokenOrEndedStreamsAreLeftToNext) {
  std::string unterminated = observation(0);
  unterminated.back() = 'x';
  struct Case {
    std::string bytes;
    bool closed;
    ErrorCode error;
  };
  for (const Case& c : {Case{"not json\n", false, ErrorCode::kCompileError},
                        Case{"{\"observation\":1,\"x\":1}\n", false, ErrorCode::kCompileError},
                        Case{unterminated, false, ErrorCode::kCompileError},
                        Case{observation(0).substr(0, 25), true, ErrorCode::kDisconnected},
                        Case{std::string(2000, 'x'), false, ErrorCode::kInvalidArgument},
                        Case{"", true, ErrorCode::kOk}}) {
    RecordReader reader(twoFeatures(), 1024);
    BufferedObservation taken = reader.takeBuffered(c.bytes, c.closed);
    EXPECT_EQ(taken.readiness, RecordReadiness::kOther) << shown(c.bytes);
    EXPECT_EQ(taken.consumed, 0u);
    EXPECT_FALSE(taken.observation.has_value());
    BufferSource source(c.bytes);
    Result<std::optional<Observation>> next = reader.next(source);
    EXPECT_EQ(next.status().code(), c.error) << shown(c.bytes) << ": " << next.status().toString();
    if (next.ok()) {
      EXPECT_FALSE(next->has_value());  // the clean end
    }
  }
}

TEST(DecodeFeature, RefusesAMissingFeatureOrTooFewBytes) {
  ChannelHeader header = twoFeatures();
  Observation observation{0, "", std::string(16, '\0')};
  EXPECT_EQ(decodeFeature(header, observation, 1).value(), Value(FloatTensor{{2}, {0.0F, 0.0F}}));
  EXPECT_EQ(decodeFeature(header, observation, 2).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(findFeature(header, observation, "nope").has_value());
  observation.tensors.resize(12);
  EXPECT_EQ(decodeFeature(header, observation, 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(decodeFeatures(header, observation).status().code(), ErrorCode::kInvalidArgument);
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
    EXPECT_EQ(decodeFeature(channel->header(), **next, 0).value(), Value(Int64Tensor{{1}, {5}}));
    EXPECT_EQ(channel->nextReadiness().status().code(), ErrorCode::kInvalidArgument);  // unanswered
    ASSERT_TRUE(
        channel->sendAdvice(Value(std::int64_t{0}), in(std::chrono::milliseconds(5000))).ok());
  }
}

// Over real FIFOs: an observation taken by nextReadiness() is the one next()
// returns, and garbage after it is not taken but reported by next().
TEST(RecordReadiness, ChannelTakesWholeRecordsAndLeavesGarbageToNext) {
  TempDir dir;
  {
    FakeCompilerThread fake(dir.path() / "chan", [&](FakeCompilerThread::Ends& ends) {
      ends.write(smallHeader() + "{\"context\":\"f\"}\n" + smallRecord(4, 9, 1.0f, 2.0f, 3));
      if (!ends.readAdvice(8)) return;
      ends.write("{\"observation\":5} trailing garbage\n");
    });
    Result<InteractiveChannel> channel = InteractiveChannel::create(dir.path(), "chan");
    ASSERT_TRUE(channel.ok());
    ASSERT_TRUE(channel->connect(in(std::chrono::milliseconds(5000))).ok());
    auto settle = [&] {
      RecordReadiness seen = RecordReadiness::kIncomplete;
      for (int i = 0; i < 5000 && seen == RecordReadiness::kIncomplete; ++i) {
        seen = channel->nextReadiness().value();
        if (seen == RecordReadiness::kIncomplete) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      return seen;
    };
    ASSERT_EQ(settle(), RecordReadiness::kObservation);
    EXPECT_EQ(channel->nextReadiness().value(), RecordReadiness::kObservation);  // still held
    Result<std::optional<Observation>> next = channel->next(in(std::chrono::milliseconds(1)));
    ASSERT_TRUE(next.ok() && next->has_value()) << next.status().toString();
    EXPECT_EQ((*next)->index, 4);
    EXPECT_EQ((*next)->context, "f");
    EXPECT_EQ(decodeFeature(channel->header(), **next, 0).value(), Value(Int64Tensor{{1}, {9}}));
    ASSERT_TRUE(
        channel->sendAdvice(Value(std::int64_t{1}), in(std::chrono::milliseconds(5000))).ok());
    EXPECT_EQ(settle(), RecordReadiness::kOther);
    Result<std::optional<Observation>> broken = channel->next(in(std::chrono::milliseconds(5000)));
    EXPECT_EQ(broken.status().code(), ErrorCode::kCompileError) << broken.status().toString();
    EXPECT_NE(broken.status().message().find("trailing garbage"), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::mlgo_channel
