// Named pipes with a deadline on every open, read and write. LLVM's compiler
// side opens its ends blocking; the host side here never blocks without a
// deadline, and gives up early when the peer process is known to be dead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/clock.h>
#include <kiln/status.h>

namespace kiln::mlgo_channel {

// Returns false once the process on the other end has died; an empty function
// means "unknown, assume alive". Called between short poll slices.
using AliveCheck = std::function<bool()>;

// How long one poll() may sleep before the deadline and the alive check are
// looked at again.
inline constexpr std::chrono::milliseconds kPollSlice{20};

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// mkfifo with mode 0600; fails if `path` already exists.
Status makeFifo(const std::filesystem::path& path);

// Opens the write end without blocking: retries while there is no reader yet
// (ENXIO) until the deadline or until `alive` says the peer died.
Result<UniqueFd> openFifoForWriting(const std::filesystem::path& path, TimePoint deadline,
                                    const AliveCheck& alive);
// Opens the read end non-blocking; this never waits for a writer.
Result<UniqueFd> openFifoForReading(const std::filesystem::path& path);

// Writes all of `bytes` or fails: a short write is an error (the peer would
// otherwise wait forever for the rest). A closed reader is a disconnected
// status, never a SIGPIPE.
Status writeAll(int fd, std::string_view bytes, TimePoint deadline, const AliveCheck& alive,
                std::string_view what);

// What a read of 0 bytes from a FIFO meant, asked of poll() right after it:
// Linux reports POLLHUP only once a writer has come and gone, and POLLIN
// while data waits (with or without the hang-up). So data that arrived since
// the read (the compiler opened its end and wrote) is kData, not the end, and
// a FIFO whose writer has not arrived yet is kNothing.
enum class AfterEmptyRead { kHangUp, kData, kNothing };
AfterEmptyRead hangUpOrData(int fd);

// Buffered reads from a non-blocking fd. EOF is only reported after poll()
// said the fd is readable or hung up, so a FIFO whose writer has not arrived
// yet is waited for rather than mistaken for an empty stream.
class FifoReader {
 public:
  FifoReader() = default;
  explicit FifoReader(UniqueFd fd) : fd_(std::move(fd)) {}

  // A line without its '\n'; nullopt on EOF before any byte of the line; an
  // error on EOF inside the line, on a line longer than `maxBytes`, on the
  // deadline or a dead peer.
  Result<std::optional<std::string>> readLine(std::size_t maxBytes, TimePoint deadline,
                                              const AliveCheck& alive);
  // Exactly `n` bytes, or an error (EOF counts as one: the caller is inside a record).
  Result<std::string> readExact(std::size_t n, TimePoint deadline, const AliveCheck& alive);

  void close() { fd_.reset(); }
  bool open() const { return fd_.valid(); }

  // Reads what the fd holds right now, never waiting (at most `maxBytes` per
  // call, so that a fast writer cannot keep the caller reading). False once
  // the writer has closed its end and everything was read.
  Result<bool> readAvailable(std::size_t maxBytes);
  // The bytes read but not yet consumed by readLine/readExact/consume.
  std::string_view buffered() const { return std::string_view(buffer_).substr(start_); }
  // Drops the first `n` bytes of buffered() (at most all of them), which the
  // caller parsed in place.
  void consume(std::size_t n) { start_ += std::min(n, buffer_.size() - start_); }
  int fd() const { return fd_.get(); }

 private:
  // Appends what one read() returns; false at EOF.
  Result<bool> fill(TimePoint deadline, const AliveCheck& alive);
  // Drops the bytes already consumed once they are many or all of the buffer.
  void dropConsumed();

  UniqueFd fd_;
  std::string buffer_;
  std::size_t start_ = 0;  // consumed prefix of buffer_
};

}  // namespace kiln::mlgo_channel
