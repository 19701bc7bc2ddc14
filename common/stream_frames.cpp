#include "common/stream_frames.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

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

Status StreamFrameReader::readAvailable(int fd, std::vector<std::string>& frames) {
  char chunk[64 * 1024];
  // A peer that never stops writing must not hold its reader's loop: after
  // this much, the rest waits for the next call (the socket stays readable).
  constexpr std::size_t kBytesPerCall = 4u << 20;
  for (std::size_t taken = 0; taken < kBytesPerCall;) {
    const ssize_t got = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (got > 0) {
      taken += static_cast<std::size_t>(got);
      buffer_.append(chunk, static_cast<std::size_t>(got));
      KILN_RETURN_IF_ERROR(takeFrames(frames));
      // A short read took all there was: asking again would only say so
      // (the caller polls before the next read).
      if (static_cast<std::size_t>(got) < sizeof(chunk)) return okStatus();
      continue;
    }
    if (got == 0) return disconnected("the peer closed the direct channel");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
    return disconnected(fmt::format("the direct channel failed: {}", std::strerror(errno)));
  }
  return okStatus();
}

Status StreamFrameReader::takeFrames(std::vector<std::string>& frames) {
  while (buffer_.size() - consumed_ >= kHeaderBytes) {
    const std::uint32_t length = readLength(buffer_.data() + consumed_);
    if (length > maxFrameBytes_) {
      return invalidArgument(
          fmt::format("a frame of {} bytes is over the limit of {} bytes", length, maxFrameBytes_));
    }
    if (buffer_.size() - consumed_ - kHeaderBytes < length) break;
    frames.emplace_back(buffer_, consumed_ + kHeaderBytes, length);
    consumed_ += kHeaderBytes + length;
  }
  // Drop what was taken once it is most of the buffer: a cheap move, not one
  // per frame.
  if (consumed_ > 0 && consumed_ * 2 >= buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return okStatus();
}

void StreamFrameWriter::queue(const void* data, std::size_t size) {
  if (sent_ == buffer_.size()) {
    buffer_.clear();
    sent_ = 0;
  }
  const auto length = static_cast<std::uint32_t>(size);
  for (std::size_t i = 0; i < kHeaderBytes; ++i) {
    buffer_.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  }
  buffer_.append(static_cast<const char*>(data), size);
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
