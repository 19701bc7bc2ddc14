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

#include "common/clock.h"
#include "common/function_ref.h"
#include "common/status.h"

namespace kiln {

// Receives each complete frame; the view is valid only during the call.
using FrameSink = FunctionRef<void(std::string_view)>;

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
  // The same, appending a copy of each frame to `frames`.
  Status readAvailable(int fd, std::vector<std::string>& frames);

 private:
  // Passes the complete frames at the start of `bytes`; returns how many
  // bytes they took.
  Result<std::size_t> takeFrames(std::string_view bytes, FrameSink sink) const;

  std::size_t maxFrameBytes_;
  std::string buffer_;
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
