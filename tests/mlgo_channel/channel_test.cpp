// The host channel against a fake compiler thread over real FIFOs.
#include "compilers/mlgo_channel/channel.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <future>
#include <iostream>

#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
namespace {

using std::chrono::milliseconds;
using testing::bytesOf;
using testing::FakeCompilerThread;
using testing::in;
using testing::smallHeader;
using testing::smallRecord;
using testing::TempDir;
using Ends = FakeCompilerThread::Ends;

constexpr milliseconds kGenerous{5000};

InteractiveChannel makeChannel(const TempDir& dir, ChannelOptions options = {}) {
  Result<InteractiveChannel> channel = InteractiveChannel::create(dir.path(), "chan", options);
  EXPECT_TRUE(channel.ok()) << channel.status().toString();
  return std::move(channel).value();
}

TEST(InteractiveChannelTest, PlaysAWholeEpisode) {
  TempDir dir;
  std::vector<std::string> received;
  {
    FakeCompilerThread fake(dir.path() / "chan", [&received](Ends& ends) {
      ends.write(smallHeader() + "{\"context\":\"f1\"}\n" + smallRecord(0, 42, 1.5f, -2.0f, 3));
      received.push_back(ends.readAdvice(8).value_or("EOF"));
      ends.write("{\"context\":\"f2\"}\n" + smallRecord(1, -7, 0.0f, 9.0f, 4));
      received.push_back(ends.readAdvice(8).value_or("EOF"));
    });
    InteractiveChannel channel = makeChannel(dir);
    EXPECT_EQ(channel.basePath(), dir.path() / "chan");
    ASSERT_TRUE(channel.connect(in(kGenerous)).ok());
    ASSERT_EQ(channel.header().features.size(), 3u);
    EXPECT_EQ(channel.header().advice.name, "decision");

    Result<std::optional<Observation>> first = channel.next(in(kGenerous));
    ASSERT_TRUE(first.ok()) << first.status().toString();
    ASSERT_TRUE(first->has_value());
    const Observation& obs = **first;
    EXPECT_EQ(obs.index, 0);
    EXPECT_EQ(obs.context, "f1");
    Result<std::vector<Value>> features = decodeFeatures(channel.header(), obs);
    ASSERT_TRUE(features.ok()) << features.status().toString();
    ASSERT_EQ(features->size(), 3u);
    EXPECT_EQ((*features)[0], Value(Int64Tensor{{1}, {42}}));
    EXPECT_EQ((*features)[1], Value(FloatTensor{{1, 2}, {1.5f, -2.0f}}));
    EXPECT_EQ((*features)[2], Value(Int64Tensor{{3}, {3, -1, 7}}));  // int32 widened
    EXPECT_EQ(decodeFeature(channel.header(), obs, 1).value(), (*features)[1]);
    EXPECT_EQ(*findFeature(channel.header(), obs, "a"), Value(Int64Tensor{{1}, {42}}));
    EXPECT_TRUE(channel.awaitingAdvice());
    ASSERT_TRUE(channel.sendAdvice(Value(std::int64_t{1}), in(kGenerous)).ok());

    Result<std::optional<Observation>> second = channel.next(in(kGenerous));
    ASSERT_TRUE(second.ok() && second->has_value()) << second.status().toString();
    EXPECT_EQ((*second)->index, 1);
    EXPECT_EQ((*second)->context, "f2");
    ASSERT_TRUE(channel.sendAdvice(Value(Int64Tensor{{1}, {0}}), in(kGenerous)).ok());

    Result<std::optional<Observation>> end = channel.next(in(kGenerous));
    ASSERT_TRUE(end.ok()) << end.status().toString();
    EXPECT_FALSE(end->has_value());
    Result<std::optional<Observation>> again = channel.next(in(kGenerous));
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->has_value());
  }
  EXPECT_EQ(received,
            (std::vector<std::string>{bytesOf(std::int64_t{1}), bytesOf(std::int64_t{0})}));
  EXPECT_TRUE(dir.entries().empty()) << "FIFOs left behind";
}

TEST(InteractiveChannelTest, ManyRoundTripsStayBounded) {
  TempDir dir;
  constexpr int kRounds = 2000;
  int answered = 0;
  auto start = std::chrono::steady_clock::now();
  {
    FakeCompilerThread fake(dir.path() / "chan", [&answered](Ends& ends) {
      ends.write(smallHeader() + "{\"context\":\"\"}\n");
      for (int i = 0; i < kRounds; ++i) {
        if (!ends.write(smallRecord(i, i, 0.5f, 1.5f, i))) return;
        std::optional<std::string> advice = ends.readAdvice(8);
        if (!advice || *advice != bytesOf(std::int64_t{i % 2})) return;
        ++answered;
      }
    });
    InteractiveChannel channel = makeChannel(dir);
    ASSERT_TRUE(channel.connect(in(kGenerous)).ok());
    for (int i = 0;; ++i) {
      Result<std::optional<Observation>> obs = channel.next(in(kGenerous));
      ASSERT_TRUE(obs.ok()) << obs.status().toString();
      if (!obs->has_value()) break;
      ASSERT_EQ((*obs)->index, i);
      ASSERT_TRUE(channel.sendAdvice(Value(std::int64_t{i % 2}), in(kGenerous)).ok());
    }
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(answered, kRounds);
  std::cout << "[ info ] " << kRounds << " round trips in "
            << std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count() / kRounds
            << " us each\n";
}

TEST(InteractiveChannelTest, CreateRefusesBadPlaces) {
  TempDir dir;
  EXPECT_EQ(InteractiveChannel::create(dir.path() / "missing", "chan").status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(InteractiveChannel::create(dir.path(), "a/b").status().code(),
            ErrorCode::kInvalidArgument);
  InteractiveChannel first = makeChannel(dir);
  Result<InteractiveChannel> second = InteractiveChannel::create(dir.path(), "chan");
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("File exists"), std::string::npos);
}

TEST(InteractiveChannelTest, ConnectTimesOutWhenTheCompilerNeverOpens) {
  TempDir dir;
  InteractiveChannel channel = makeChannel(dir);
  auto start = std::chrono::steady_clock::now();
  Status status = channel.connect(in(milliseconds(200)));
  EXPECT_EQ(status.code(), ErrorCode::kTimeout) << status.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
}

TEST(InteractiveChannelTest, ConnectStopsAtOnceWhenTheCompilerDied) {
  TempDir dir;
  InteractiveChannel channel = makeChannel(dir);
  auto start = std::chrono::steady_clock::now();
  Status status = channel.connect(in(kGenerous), [] { return false; });
  EXPECT_EQ(status.code(), ErrorCode::kDisconnected) << status.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

// Runs a fake that writes `stream` and closes; returns connect()+next() outcome.
Status playStream(const std::string& stream, ChannelOptions options = {}) {
  TempDir dir;
  Status result;
  {
    FakeCompilerThread fake(dir.path() / "chan", [&stream](Ends& ends) { ends.write(stream); });
    InteractiveChannel channel = makeChannel(dir, options);
    result = channel.connect(in(kGenerous));
    if (result.ok()) {
      Result<std::optional<Observation>> obs = channel.next(in(kGenerous));
      result = !obs.ok()          ? obs.status()
               : obs->has_value() ? internalError("got an observation")
                                  : okStatus();
    }
  }
  EXPECT_TRUE(dir.entries().empty()) << "FIFOs left behind";
  return result;
}

void expectError(const Status& status, ErrorCode code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status.toString();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.toString();
}

TEST(InteractiveChannelTest, GarbageHeaderIsAProtocolError) {
  expectError(playStream("hello compiler\n"), ErrorCode::kCompileError, "bad header");
  expectError(playStream("{\"features\":[]}\n"), ErrorCode::kCompileError, "\"advice\"");
}

TEST(InteractiveChannelTest, EndOfStreamBeforeOrInsideTheHeader) {
  expectError(playStream(""), ErrorCode::kDisconnected, "before sending the header");
  expectError(playStream("{\"features\""), ErrorCode::kDisconnected, "inside a line");
}

TEST(InteractiveChannelTest, EpisodeWithoutDecisionsEndsCleanly) {
  EXPECT_TRUE(playStream(smallHeader() + "{\"context\":\"main\"}\n").ok());
}

TEST(InteractiveChannelTest, TruncatedTensorIsAnError) {
  std::string record = smallRecord(0, 1, 2.0f, 3.0f, 4);
  expectError(playStream(smallHeader() + record.substr(0, record.size() - 6)),
              ErrorCode::kDisconnected, "ended after");
}

TEST(InteractiveChannelTest, MissingRecordNewlineIsAnError) {
  std::string record = smallRecord(0, 1, 2.0f, 3.0f, 4);
  record.back() = 'X';
  expectError(playStream(smallHeader() + record), ErrorCode::kCompileError,
              "not followed by exactly 28 tensor bytes");
}

TEST(InteractiveChannelTest, GarbageRecordLinesAreErrors) {
  expectError(playStream(smallHeader() + "garbage\n"), ErrorCode::kCompileError, "\"garbage\"");
  expectError(playStream(smallHeader() + "{\"reward\":3}\n"), ErrorCode::kCompileError,
              "unexpected record line");
  expectError(playStream(smallHeader() + "{\"observation\":\"x\"}\n"), ErrorCode::kCompileError,
              "unexpected record line");
  ChannelOptions options;
  options.maxLineBytes = 100;
  expectError(
      playStream(smallHeader() + "{\"context\":\"" + std::string(500, 'n') + "\"}\n", options),
      ErrorCode::kInvalidArgument, "longer than 100 bytes");
}

TEST(InteractiveChannelTest, HungCompilerHitsTheDeadline) {
  TempDir dir;
  // After the header the fake waits for advice that never comes: it only
  // returns once the channel is destroyed and its read sees EOF.
  FakeCompilerThread fake(dir.path() / "chan", [](Ends& ends) {
    ends.write(smallHeader());
    ends.readAdvice(8);
  });
  InteractiveChannel channel = makeChannel(dir);
  ASSERT_TRUE(channel.connect(in(kGenerous)).ok());
  auto start = std::chrono::steady_clock::now();
  Result<std::optional<Observation>> obs = channel.next(in(milliseconds(200)));
  EXPECT_EQ(obs.status().code(), ErrorCode::kTimeout) << obs.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
}

TEST(InteractiveChannelTest, WrongAdviceIsRejectedBeforeWriting) {
  TempDir dir;
  std::string received;
  {
    FakeCompilerThread fake(dir.path() / "chan", [&received](Ends& ends) {
      ends.write(smallHeader() + smallRecord(0, 1, 2.0f, 3.0f, 4));
      received = ends.readAdvice(8).value_or("EOF");
      // Nothing more may arrive: the next read must see the host's close.
      received += ends.readAdvice(1).value_or("|EOF");
    });
    InteractiveChannel channel = makeChannel(dir);
    ASSERT_TRUE(channel.connect(in(kGenerous)).ok());
    EXPECT_EQ(channel.sendAdvice(Value(std::int64_t{1}), in(kGenerous)).code(),
              ErrorCode::kInvalidArgument);  // nothing to answer yet
    ASSERT_TRUE(channel.next(in(kGenerous)).ok());
    EXPECT_EQ(channel.next(in(kGenerous)).status().code(), ErrorCode::kInvalidArgument);
    expectError(channel.sendAdviceBytes("abc", in(kGenerous)), ErrorCode::kInvalidArgument,
                "exactly 8 bytes, got 3");
    expectError(channel.sendAdvice(Value(Int64Tensor{{2}, {1, 1}}), in(kGenerous)),
                ErrorCode::kInvalidArgument, "got 2");
    expectError(channel.sendAdvice(Value(0.5), in(kGenerous)), ErrorCode::kInvalidArgument,
                "cannot be made from");
    ASSERT_TRUE(channel.sendAdvice(Value(std::int64_t{5}), in(kGenerous)).ok());
  }
  EXPECT_EQ(received, bytesOf(std::int64_t{5}) + "|EOF");
}

TEST(InteractiveChannelTest, AdviceToAVanishedCompilerIsDisconnectedNotSigpipe) {
  TempDir dir;
  std::promise<void> gone;
  FakeCompilerThread fake(dir.path() / "chan", [&gone](Ends& ends) {
    ends.write(smallHeader() + smallRecord(0, 1, 2.0f, 3.0f, 4));
    ::close(ends.advice);
    ends.advice = -1;
    ends.closeRecords();
    gone.set_value();
  });
  InteractiveChannel channel = makeChannel(dir);
  ASSERT_TRUE(channel.connect(in(kGenerous)).ok());
  ASSERT_TRUE(channel.next(in(kGenerous)).ok());
  gone.get_future().wait();
  expectError(channel.sendAdvice(Value(std::int64_t{1}), in(kGenerous)), ErrorCode::kDisconnected,
              "closed");
}

}  // namespace
}  // namespace kiln::mlgo_channel
