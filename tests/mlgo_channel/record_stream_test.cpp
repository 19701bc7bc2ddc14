// The record-stream parser over an in-memory buffer: the same code the FIFO
// channel runs, without pipes or threads.
#include "compilers/mlgo_channel/record_stream.h"

#include <gtest/gtest.h>

#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
namespace {

using testing::smallHeader;
using testing::smallRecord;

Result<ChannelHeader> headerOf(BufferSource& source) { return readHeader(source, HeaderLimits{}); }

TEST(RecordStreamTest, ReadsAnEpisodeFromMemory) {
  std::string stream = smallHeader() + "{\"context\":\"f1\"}\n" +
                       smallRecord(0, 42, 1.5f, -2.0f, 3) + smallRecord(1, -7, 0.0f, 9.0f, 4);
  BufferSource source(stream);
  Result<ChannelHeader> header = headerOf(source);
  ASSERT_TRUE(header.ok()) << header.status().toString();
  RecordReader reader(*header, 1024);
  auto first = reader.next(source);
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().toString();
  EXPECT_EQ((*first)->index, 0);
  EXPECT_EQ((*first)->context, "f1");
  EXPECT_EQ(*findFeature(*header, **first, "a"), Value(Int64Tensor{{1}, {42}}));
  auto second = reader.next(source);
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->context, "f1");  // the context carries over
  EXPECT_EQ(decodeFeature(*header, **second, 2).value(), Value(Int64Tensor{{3}, {4, -1, 7}}));
  auto end = reader.next(source);
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  EXPECT_EQ(source.position(), stream.size());
}

TEST(RecordStreamTest, EndsBeforeTheHeaderIsDisconnected) {
  BufferSource source("");
  EXPECT_EQ(headerOf(source).status().code(), ErrorCode::kDisconnected);
}

TEST(RecordStreamTest, BadHeaderIsAProtocolError) {
  BufferSource source("{\"features\":[]}\n");
  Result<ChannelHeader> header = headerOf(source);
  EXPECT_EQ(header.status().code(), ErrorCode::kCompileError);
  EXPECT_NE(header.status().message().find("bad header"), std::string::npos);
}

TEST(RecordStreamTest, RecordCutShortIsDisconnected) {
  std::string stream = smallHeader() + smallRecord(0, 1, 0.0f, 0.0f, 0).substr(0, 25);
  BufferSource source(stream);
  RecordReader reader(headerOf(source).value(), 1024);
  EXPECT_EQ(reader.next(source).status().code(), ErrorCode::kDisconnected);
}

TEST(RecordStreamTest, MissingNewlineAfterTensorsIsAProtocolError) {
  std::string record = smallRecord(0, 1, 0.0f, 0.0f, 0);
  record.back() = 'x';
  std::string stream = smallHeader() + record;
  BufferSource source(stream);
  RecordReader reader(headerOf(source).value(), 1024);
  EXPECT_EQ(reader.next(source).status().code(), ErrorCode::kCompileError);
}

TEST(RecordStreamTest, OverlongLineIsRefused) {
  std::string stream = smallHeader() + "{\"context\":\"" + std::string(300, 'f') + "\"}\n";
  BufferSource source(stream);
  RecordReader reader(headerOf(source).value(), 256);
  EXPECT_EQ(reader.next(source).status().code(), ErrorCode::kInvalidArgument);
}

TEST(RecordStreamTest, OutcomeWithoutScoreIsAProtocolError) {
  std::string stream = smallHeader() + "{\"outcome\":0}\n";
  BufferSource source(stream);
  RecordReader reader(headerOf(source).value(), 1024);
  EXPECT_EQ(reader.next(source).status().code(), ErrorCode::kCompileError);
}

}  // namespace
}  // namespace kiln::mlgo_channel
