// Frames over a byte stream, for the same-host direct channel between a
// client and a worker (worker/direct_channels.h): each frame is its length
// (4 bytes, little-endian) followed by its bytes. A reader keeps a partial
// frame across reads; a writer keeps what the socket did not take yet, so
// neither side ever blocks on a slow or stuck peer.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "common/base/function_ref.h"
#include "common/transport/frame_prefix.h"

namespace kiln {

// Receives each complete frame; the view is valid only during the call.
using FrameSink = FunctionRef<void(std::string_view)>;
// Receives a frame over the limit once all of it went by: its first bytes
// (at most kRequestIdPrefixBytes, enough for a message's root) and its
// length. The rest was read and dropped, never buffered.
using OversizedSink = FunctionRef<void(std::string_view prefix, std::size_t length)>;

class StreamFrameReader {
 public:
  explicit StreamFrameReader(std::size_t maxFrameBytes) : maxFrameBytes_(maxFrameBytes) {}

  // Reads what the nonblocking `fd` holds now (up to 4 MiB per call, so
  // that one busy peer cannot hold a loop) and passes each complete frame
  // to `sink` (also when it then fails). disconnected once the peer has
  // closed or the socket failed; invalidArgument for a frame over the limit
  // (its bytes are never buffered). The stream is unusable after an error.
  // Frames that arrive whole in one read are passed without a copy.
  Status readAvailable(int fd, FrameSink sink);
  // The same, but a frame over the limit goes by to `oversized` and the
  // stream stays usable: the sender hears why its request was refused
  // instead of losing its connection (worker/direct_channels.h).
  Status readAvailable(int fd, FrameSink sink, OversizedSink oversized);
  // The same as the first, appending a copy of each frame to `frames`.
  Status readAvailable(int fd, std::vector<std::string>& frames);

 private:
  Status read(int fd, FrameSink sink, const OversizedSink* oversized);
  // Passes the complete frames at the start of `bytes`, and drops the bytes
  // of an oversized one; returns how many bytes they took.
  Result<std::size_t> takeFrames(std::string_view bytes, FrameSink sink,
                                 const OversizedSink* oversized);

  std::size_t maxFrameBytes_;
  std::string buffer_;
  // The frame over the limit being dropped: its length, the bytes of it
  // still to come, and its first bytes.
  std::size_t oversizedLength_ = 0;
  std::size_t oversizedLeft_ = 0;
  std::string oversizedPrefix_;
};

class StreamFrameWriter {
 public:
  void queue(const void* data, std::size_t size);
  // Queues a finished message, serialized straight into the buffer.
  void queue(capnp::MessageBuilder& message);
  bool pending() const { return sent_ < buffer_.size(); }
  // Writes what the nonblocking `fd` takes now; disconnected if the peer is gone.
  Status flush(int fd);
  // Writes everything, waiting for `fd` to take it, until `deadline`.
  Status flushUntil(int fd, TimePoint deadline);

 private:
  std::string buffer_;
  std::size_t sent_ = 0;
};

}  // namespace kiln
