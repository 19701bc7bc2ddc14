#include "common/transport/stream_frames.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace {

using namespace std::chrono_literals;

// A connected pair of nonblocking local stream sockets, like a direct
// channel's two ends.
struct SocketPair {
  int writer = -1;
  int reader = -1;
  SocketPair() {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    writer = fds[0];
    reader = fds[1];
  }
  ~SocketPair() {
    closeWriter();
    closeReader();
  }
  void closeWriter() {
    if (writer >= 0) ::close(writer);
    writer = -1;
  }
  void closeReader() {
    if (reader >= 0) ::close(reader);
    reader = -1;
  }
  // Writes all of `bytes` (small amounts only: the socket must take them).
  void put(const std::string& bytes) const {
    ASSERT_EQ(::send(writer, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
};

// The wire form of `frames`, written by hand (not by StreamFrameWriter) so
// that the reader is checked against the format, not against the writer.
std::string encoded(const std::vector<std::string>& frames) {
  std::string bytes;
  for (const std::string& frame : frames) {
    const auto length = static_cast<std::uint32_t>(frame.size());
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
    bytes += frame;
  }
  return bytes;
}

std::string patterned(std::size_t size, char seed) {
  std::string text(size, '\0');
  for (std::size_t i = 0; i < size; ++i) text[i] = static_cast<char>(seed + i * 7);
  return text;
}

TEST(StreamFramesTest, FramesSplitAtEveryByteArriveWholeAndInOrder) {
  // 300 bytes: a length with a nonzero second byte.
  const std::vector<std::string> sent = {"a", patterned(300, 'x'), "xyz"};
  const std::string bytes = encoded(sent);
  for (std::size_t split = 0; split <= bytes.size(); ++split) {
    SocketPair pair;
    StreamFrameReader reader(1024);
    std::vector<std::string> frames;
    pair.put(bytes.substr(0, split));
    ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok()) << "split at " << split;
    pair.put(bytes.substr(split));
    ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok()) << "split at " << split;
    ASSERT_EQ(frames, sent) << "split at " << split;
  }
}

TEST(StreamFramesTest, OneByteAtATime) {
  const std::vector<std::string> sent = {"first", "", patterned(260, 'q'), "last"};
  const std::string bytes = encoded(sent);
  SocketPair pair;
  StreamFrameReader reader(1024);
  std::vector<std::string> frames;
  for (char byte : bytes) {
    pair.put(std::string(1, byte));
    ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  }
  EXPECT_EQ(frames, sent);
}

TEST(StreamFramesTest, SeveralFramesInOneRead) {
  std::vector<std::string> sent;
  for (int i = 0; i < 20; ++i) sent.push_back("frame-" + std::to_string(i));
  SocketPair pair;
  pair.put(encoded(sent));
  StreamFrameReader reader(64);
  std::vector<std::string> frames;
  ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  EXPECT_EQ(frames, sent);
  // Nothing more to read: ok and no frames.
  ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  EXPECT_EQ(frames.size(), sent.size());
}

TEST(StreamFramesTest, AFrameOfExactlyTheLimitIsAccepted) {
  SocketPair pair;
  const std::string frame = patterned(100, 'k');
  pair.put(encoded({frame}));
  StreamFrameReader reader(100);
  std::vector<std::string> frames;
  ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  EXPECT_EQ(frames, std::vector<std::string>{frame});
}

TEST(StreamFramesTest, ALengthOverTheLimitIsRefusedBeforeItsBody) {
  SocketPair pair;
  // A valid frame, then a header claiming 1 GiB followed by a few bytes: the
  // refusal must come from the header alone, without waiting for (or
  // keeping) the body.
  std::string bytes = encoded({"ok"});
  const std::uint32_t huge = 1u << 30;
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((huge >> (8 * i)) & 0xff));
  bytes += "some of the body";
  pair.put(bytes);
  StreamFrameReader reader(1024);
  std::vector<std::string> frames;
  Status read = reader.readAvailable(pair.reader, frames);
  EXPECT_EQ(read.code(), ErrorCode::kInvalidArgument) << read.toString();
  EXPECT_NE(read.message().find("1073741824"), std::string::npos) << read.message();
  EXPECT_EQ(frames, std::vector<std::string>{"ok"});
}

TEST(StreamFramesTest, OneByteOverTheLimitIsRefused) {
  SocketPair pair;
  pair.put(encoded({patterned(101, 'k')}));
  StreamFrameReader reader(100);
  std::vector<std::string> frames;
  EXPECT_EQ(reader.readAvailable(pair.reader, frames).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(frames.empty());
}

TEST(StreamFramesTest, PeerCloseGivesDisconnectedAfterTheCompletedFrames) {
  SocketPair pair;
  std::string bytes = encoded({"one", "two", "three-is-cut"});
  pair.put(bytes.substr(0, bytes.size() - 3));  // the third frame never completes
  pair.closeWriter();
  StreamFrameReader reader(1024);
  std::vector<std::string> frames;
  Status read;
  // A short read may return before it sees the close: a few bounded reads.
  for (int i = 0; i < 5 && read.ok(); ++i) read = reader.readAvailable(pair.reader, frames);
  EXPECT_EQ(read.code(), ErrorCode::kDisconnected) << read.toString();
  EXPECT_EQ(frames, (std::vector<std::string>{"one", "two"}));
}

TEST(StreamFramesTest, ZeroLengthFramesAreFrames) {
  SocketPair pair;
  StreamFrameWriter writer;
  writer.queue("", 0);
  writer.queue("between", 7);
  writer.queue(nullptr, 0);
  ASSERT_TRUE(writer.flush(pair.writer).ok());
  EXPECT_FALSE(writer.pending());
  StreamFrameReader reader(16);
  std::vector<std::string> frames;
  ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  EXPECT_EQ(frames, (std::vector<std::string>{"", "between", ""}));
}

TEST(StreamFramesTest, TheWriterProducesTheDocumentedFormat) {
  SocketPair pair;
  StreamFrameWriter writer;
  const std::string frame = patterned(0x1234, 'w');
  writer.queue(frame.data(), frame.size());
  ASSERT_TRUE(writer.flush(pair.writer).ok());
  std::string got(frame.size() + 16, '\0');
  const ssize_t read = ::recv(pair.reader, got.data(), got.size(), 0);
  ASSERT_EQ(read, static_cast<ssize_t>(frame.size() + 4));
  got.resize(static_cast<std::size_t>(read));
  EXPECT_EQ(got, encoded({frame}));
}

// Shrinks the send buffer of `fd` so that a few KiB fill it.
void shrinkSendBuffer(int fd) {
  int size = 4096;
  ASSERT_EQ(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)), 0);
}

// Queues numbered frames and flushes until the socket stops taking them;
// returns what was queued.
std::vector<std::string> fillUntilPending(StreamFrameWriter& writer, int fd) {
  std::vector<std::string> queued;
  for (int i = 0; i < 10000 && !writer.pending(); ++i) {
    queued.push_back(std::to_string(i) + ":" + patterned(500, static_cast<char>(i)));
    writer.queue(queued.back().data(), queued.back().size());
    EXPECT_TRUE(writer.flush(fd).ok());
  }
  return queued;
}

TEST(StreamFramesTest, TheWriterKeepsWhatAFullSocketDoesNotTake) {
  SocketPair pair;
  shrinkSendBuffer(pair.writer);
  StreamFrameWriter writer;
  std::vector<std::string> queued = fillUntilPending(writer, pair.writer);
  ASSERT_TRUE(writer.pending()) << "the socket never filled up";
  // The socket is full: a raw send would block.
  char probe = 0;
  ASSERT_LT(::send(pair.writer, &probe, 1, MSG_DONTWAIT | MSG_NOSIGNAL), 0);
  ASSERT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
  // More frames queue behind the pending bytes.
  for (int i = 0; i < 3; ++i) {
    queued.push_back("late-" + std::to_string(i));
    writer.queue(queued.back().data(), queued.back().size());
  }
  ASSERT_TRUE(writer.flush(pair.writer).ok());
  EXPECT_TRUE(writer.pending());

  // Drain the other end, flushing in between, until everything arrived.
  StreamFrameReader reader(1024);
  std::vector<std::string> frames;
  for (int i = 0; i < 10000 && (writer.pending() || frames.size() < queued.size()); ++i) {
    ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
    ASSERT_TRUE(writer.flush(pair.writer).ok());
  }
  EXPECT_FALSE(writer.pending());
  EXPECT_EQ(frames, queued);
}

TEST(StreamFramesTest, FlushUntilTimesOutAgainstAPeerThatNeverReads) {
  SocketPair pair;
  shrinkSendBuffer(pair.writer);
  StreamFrameWriter writer;
  const std::string big = patterned(1 << 20, 'b');
  writer.queue(big.data(), big.size());
  const auto started = std::chrono::steady_clock::now();
  Status flushed = writer.flushUntil(pair.writer, started + 50ms);
  EXPECT_EQ(flushed.code(), ErrorCode::kTimeout) << flushed.toString();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 50ms);
  EXPECT_TRUE(writer.pending());
}

TEST(StreamFramesTest, FlushUntilFinishesWhenThePeerTakesEverything) {
  SocketPair pair;
  StreamFrameWriter writer;
  writer.queue("hello", 5);
  ASSERT_TRUE(writer.flushUntil(pair.writer, std::chrono::steady_clock::now() + 5s).ok());
  EXPECT_FALSE(writer.pending());
  StreamFrameReader reader(16);
  std::vector<std::string> frames;
  ASSERT_TRUE(reader.readAvailable(pair.reader, frames).ok());
  EXPECT_EQ(frames, std::vector<std::string>{"hello"});
}

TEST(StreamFramesTest, FlushToAClosedPeerIsDisconnectedWithoutSigpipe) {
  // A SIGPIPE would end this test process: the writer must use MSG_NOSIGNAL.
  SocketPair pair;
  pair.closeReader();
  StreamFrameWriter writer;
  writer.queue("lost", 4);
  Status flushed = writer.flush(pair.writer);
  EXPECT_EQ(flushed.code(), ErrorCode::kDisconnected) << flushed.toString();
  Status again = writer.flushUntil(pair.writer, std::chrono::steady_clock::now() + 1s);
  EXPECT_EQ(again.code(), ErrorCode::kDisconnected) << again.toString();
}

TEST(StreamFramesTest, ReadingAClosedSocketAfterItsFramesIsDisconnected) {
  SocketPair pair;
  pair.closeWriter();
  StreamFrameReader reader(16);
  std::vector<std::string> frames;
  EXPECT_EQ(reader.readAvailable(pair.reader, frames).code(), ErrorCode::kDisconnected);
  EXPECT_TRUE(frames.empty());
}

}  // namespace
}  // namespace kiln
