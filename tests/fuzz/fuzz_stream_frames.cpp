// The direct channel's byte stream (common/transport/stream_frames.h) from a hostile
// same-host client: the input's bytes go through a real socketpair, in
// chunks of a size the input picks, into a StreamFrameReader with a small
// limit, and every frame it yields is decoded as an envelope
// (InboundMessage::decode), as the worker does after the token. Properties
// checked: the reader yields exactly the frames a plain in-memory parse of
// the same bytes finds, in order, none over the limit; it ends with
// invalidArgument at the first oversized length and otherwise with
// disconnected once the client closes; a decode failure is invalidArgument.
//
// Input: [limit selector: 1 byte][chunk selector: 1 byte][stream bytes].
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/transport/frame.h"
#include "common/transport/stream_frames.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_stream_frames: property violated: %s\n", what);
    std::abort();
  }
}

struct Expected {
  std::vector<std::string> frames;
  bool oversized = false;  // the stream stops at a length over the limit
};

// The format, parsed the simplest way: the reference for the reader.
Expected parse(std::string_view bytes, std::size_t limit) {
  Expected expected;
  std::size_t at = 0;
  while (bytes.size() - at >= 4) {
    std::uint32_t length = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      length |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    }
    if (length > limit) {
      expected.oversized = true;
      break;
    }
    if (bytes.size() - at - 4 < length) break;
    expected.frames.emplace_back(bytes.substr(at + 4, length));
    at += 4 + length;
  }
  return expected;
}

void decode(const std::string& frame, const kiln::FrameLimits& limits) {
  auto message = kiln::InboundMessage::decode(frame.data(), frame.size(), limits);
  if (!message.ok()) {
    require(message.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a bad frame is not an invalid-argument status");
    return;
  }
  try {
    (void)message->envelope().toString();  // visits every field, within the traversal limit
  } catch (const kj::Exception&) {
    // A malformed body: the worker's handlers catch this and answer invalid-argument.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // Small limits (16..520 bytes) so that inputs reach them; chunks of 1..64
  // bytes split headers and bodies everywhere. A chunk never fills the
  // socket: it is read before the next one is written.
  const std::size_t limit = 16 + std::size_t{data[0]} % 64 * 8;
  const std::size_t chunk = 1 + std::size_t{data[1]} % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  kiln::FrameLimits limits;
  limits.maxMessageBytes = limit;

  int fds[2];
  require(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0,
          "socketpair failed");
  kiln::StreamFrameReader reader(limit);
  std::vector<std::string> frames;
  kiln::Status status;
  for (std::size_t at = 0; at < stream.size() && status.ok(); at += chunk) {
    const std::string_view piece = stream.substr(at, chunk);
    require(::send(fds[0], piece.data(), piece.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(piece.size()),
            "the socket did not take a chunk");
    status = reader.readAvailable(fds[1], frames);
  }
  ::close(fds[0]);
  // The close is seen at the latest by the read after the last bytes.
  for (int i = 0; i < 3 && status.ok(); ++i) status = reader.readAvailable(fds[1], frames);
  ::close(fds[1]);

  const Expected expected = parse(stream, limit);
  require(frames == expected.frames, "the reader's frames differ from the format's");
  require(status.code() == (expected.oversized ? kiln::ErrorCode::kInvalidArgument
                                               : kiln::ErrorCode::kDisconnected),
          "the reader ended with the wrong status");
  for (const std::string& frame : frames) {
    require(frame.size() <= limit, "a frame over the limit got through");
    decode(frame, limits);
  }
  return 0;
}
