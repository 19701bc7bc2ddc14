#include "common/transport/stream_frames.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <capnp/serialize.h>
#include <kj/io.h>

namespace kiln {
namespace {

constexpr std::size_t kHeaderBytes = sizeof(std::uint32_t);

std::uint32_t readLength(const char* bytes) {
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kHeaderBytes; ++i) {
    length |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return length;
}

}  // namespace

Status StreamFrameReader::readAvailable(int fd, FrameSink sink) { return read(fd, sink, nullptr); }

Status StreamFrameReader::readAvailable(int fd, FrameSink sink, OversizedSink oversized) {
  return read(fd, sink, &oversized);
}

Status StreamFrameReader::read(int fd, FrameSink sink, const OversizedSink* oversized) {
  char chunk[64 * 1024];
  // A peer that never stops writing must not hold its reader's loop: after
  // this much, the rest waits for the next call (the socket stays readable).
  constexpr std::size_t kBytesPerCall = 4u << 20;
  for (std::size_t taken = 0; taken < kBytesPerCall;) {
    const ssize_t got = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (got > 0) {
      const auto size = static_cast<std::size_t>(got);
      taken += size;
      if (buffer_.empty()) {
        // Nothing partial is kept: whole frames are passed from the chunk
        // itself, and only a partial one at its end is buffered.
        KILN_ASSIGN_OR_RETURN(std::size_t used, takeFrames({chunk, size}, sink, oversized));
        buffer_.assign(chunk + used, size - used);
      } else {
        buffer_.append(chunk, size);
        KILN_ASSIGN_OR_RETURN(std::size_t used, takeFrames(buffer_, sink, oversized));
        buffer_.erase(0, used);
      }
      // A short read took all there was: asking again would only say so
      // (the caller polls before the next read).
      if (size < sizeof(chunk)) return okStatus();
      continue;
    }
    if (got == 0) return disconnected("the peer closed the direct channel");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
    return disconnected(fmt::format("the direct channel failed: {}", std::strerror(errno)));
  }
  return okStatus();
}

Status StreamFrameReader::readAvailable(int fd, std::vector<std::string>& frames) {
  return readAvailable(fd, [&frames](std::string_view frame) { frames.emplace_back(frame); });
}

Result<std::size_t> StreamFrameReader::takeFrames(std::string_view bytes, FrameSink sink,
                                                  const OversizedSink* oversized) {
  std::size_t used = 0;
  for (;;) {
    if (oversizedLeft_ > 0) {
      const std::size_t taken = std::min(oversizedLeft_, bytes.size() - used);
      const std::size_t kept = std::min(
          taken, kRequestIdPrefixBytes - std::min(kRequestIdPrefixBytes, oversizedPrefix_.size()));
      oversizedPrefix_.append(bytes.substr(used, kept));
      used += taken;
      oversizedLeft_ -= taken;
      if (oversizedLeft_ > 0) return used;
      (*oversized)(oversizedPrefix_, oversizedLength_);
      oversizedPrefix_.clear();
      continue;
    }
    if (bytes.size() - used < kHeaderBytes) return used;
    const std::uint32_t length = readLength(bytes.data() + used);
    if (length > maxFrameBytes_) {
      if (oversized == nullptr) {
        return invalidArgument(fmt::format("a frame of {} bytes is over the limit of {} bytes",
                                           length, maxFrameBytes_));
      }
      used += kHeaderBytes;
      oversizedLength_ = oversizedLeft_ = length;
      continue;
    }
    if (bytes.size() - used - kHeaderBytes < length) return used;
    sink(bytes.substr(used + kHeaderBytes, length));
    used += kHeaderBytes + length;
  }
}

namespace {

// Appends a frame of `size` bytes to `buffer` (emptied first when all of it
// was sent): its header, and room for its body, which the caller fills.
char* appendFrame(std::string& buffer, std::size_t& sent, std::size_t size) {
  if (sent == buffer.size()) {
    buffer.clear();
    sent = 0;
  }
  const std::size_t at = buffer.size();
  // resize() zero-fills, but only what the caller then overwrites.
  buffer.resize(at + kHeaderBytes + size);
  char* out = buffer.data() + at;
  const auto length = static_cast<std::uint32_t>(size);
  for (std::size_t i = 0; i < kHeaderBytes; ++i) {
    out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  }
  return out + kHeaderBytes;
}

}  // namespace

void StreamFrameWriter::queue(const void* data, std::size_t size) {
  std::memcpy(appendFrame(buffer_, sent_, size), data, size);
}

void StreamFrameWriter::queue(capnp::MessageBuilder& message) {
  const std::size_t size = capnp::computeSerializedSizeInWords(message) * sizeof(capnp::word);
  char* body = appendFrame(buffer_, sent_, size);
  kj::ArrayOutputStream stream(kj::arrayPtr(reinterpret_cast<kj::byte*>(body), size));
  capnp::writeMessage(stream, message);
}

Status StreamFrameWriter::flush(int fd) {
  while (pending()) {
    const ssize_t put =
        ::send(fd, buffer_.data() + sent_, buffer_.size() - sent_, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (put > 0) {
      sent_ += static_cast<std::size_t>(put);
      continue;
    }
    if (put < 0 && errno == EINTR) continue;
    if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return okStatus();
    return disconnected(fmt::format("the direct channel failed: {}",
                                    put < 0 ? std::strerror(errno) : "nothing written"));
  }
  buffer_.clear();
  sent_ = 0;
  return okStatus();
}

Status StreamFrameWriter::flushUntil(int fd, TimePoint deadline) {
  for (;;) {
    KILN_RETURN_IF_ERROR(flush(fd));
    if (!pending()) return okStatus();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return timeoutError("the peer did not take the frame in time");
    pollfd writable{fd, POLLOUT, 0};
    (void)::poll(&writable, 1, static_cast<int>(left.count()) + 1);
  }
}

}  // namespace kiln
