// All fds are O_NONBLOCK | O_CLOEXEC: blocking happens only in poll() with a
// bounded timeout, and other threads' children never inherit a channel end
// (an inherited write end would hide the compiler's EOF).
#include "compilers/mlgo_channel/fifo.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace kiln::mlgo_channel {
namespace {

std::string errnoText(int err) { return std::strerror(err); }

int sliceMs(TimePoint deadline) {
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, kPollSlice.count()));
}

bool peerDead(const AliveCheck& alive) { return alive && !alive(); }

// Waits for `events` on fd; ok(true) when ready, ok(false) never. Timeout and
// dead peer are errors naming `what`.
Status waitFor(int fd, short events, TimePoint deadline, const AliveCheck& alive,
               std::string_view what) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, sliceMs(deadline));
    if (rc > 0) return okStatus();  // readable, writable, hung up or error: let the I/O say which
    if (rc < 0 && errno != EINTR) {
      return internalError("poll on " + std::string(what) + " failed: " + errnoText(errno));
    }
    if (rc == 0) {
      if (peerDead(alive)) {
        return disconnected("the compiler exited while kiln was waiting on " + std::string(what));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return timeoutError("deadline passed while waiting on " + std::string(what));
      }
    }
  }
}

// A write to a pipe without reader raises SIGPIPE, which would kill the whole
// worker. The first write on a thread blocks SIGPIPE on that thread for good
// (a thread that talks to compilers must never die of one that exits), so
// that each later write is one system call, not four: this is on the path of
// every MLGO decision. The SIGPIPE a failed write leaves pending is swallowed.
ssize_t writeWithoutSigpipe(int fd, const char* data, std::size_t n) {
  sigset_t pipeSet;
  ::sigemptyset(&pipeSet);
  ::sigaddset(&pipeSet, SIGPIPE);
  thread_local bool blocked = false;
  if (!blocked) {
    ::pthread_sigmask(SIG_BLOCK, &pipeSet, nullptr);
    blocked = true;
  }
  ssize_t written = ::write(fd, data, n);
  const int err = errno;
  if (written < 0 && err == EPIPE) {
    timespec zero{};
    while (::sigtimedwait(&pipeSet, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  errno = err;
  return written;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() { return std::exchange(fd_, -1); }

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status makeFifo(const std::filesystem::path& path) {
  if (::mkfifo(path.c_str(), 0600) != 0) {
    int err = errno;
    std::string message = "cannot create FIFO " + path.string() + ": " + errnoText(err);
    if (err == EACCES) return permissionDenied(message);
    if (err == ENOENT) return notFound(message);
    return invalidArgument(message);
  }
  return okStatus();
}

Result<UniqueFd> openFifoForWriting(const std::filesystem::path& path, TimePoint deadline,
                                    const AliveCheck& alive) {
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) return UniqueFd(fd);
    int err = errno;
    if (err != ENXIO && err != EINTR) {
      return invalidArgument("cannot open " + path.string() + " for writing: " + errnoText(err));
    }
    // ENXIO: no reader yet. The compiler opens its end right after start-up.
    if (peerDead(alive)) {
      return disconnected("the compiler exited before opening " + path.string());
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return timeoutError("deadline passed before the compiler opened " + path.string() +
                          " for reading");
    }
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, kPollSlice);
  }
}

Result<UniqueFd> openFifoForReading(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return invalidArgument("cannot open " + path.string() + " for reading: " + errnoText(errno));
  }
  return UniqueFd(fd);
}

Status writeAll(int fd, std::string_view bytes, TimePoint deadline, const AliveCheck& alive,
                std::string_view what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = writeWithoutSigpipe(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    int err = errno;
    if (n < 0 && err == EPIPE) {
      return disconnected("the compiler closed " + std::string(what) + " after " +
                          std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes");
    }
    if (n < 0 && err != EAGAIN && err != EINTR) {
      return internalError("write to " + std::string(what) + " failed: " + errnoText(err));
    }
    Status ready = waitFor(fd, POLLOUT, deadline, alive, what);
    if (!ready.ok()) {
      return Status(ready.code(), ready.message() + " (wrote " + std::to_string(done) + " of " +
                                      std::to_string(bytes.size()) + " bytes)");
    }
  }
  return okStatus();
}

AfterEmptyRead hangUpOrData(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return AfterEmptyRead::kNothing;
  if ((p.revents & POLLIN) != 0) return AfterEmptyRead::kData;
  if ((p.revents & POLLHUP) != 0) return AfterEmptyRead::kHangUp;
  return AfterEmptyRead::kNothing;
}

void FifoReader::dropConsumed() {
  // Before the consumed prefix grows: an episode may stream many MiB.
  if (start_ > 0 && (start_ == buffer_.size() || start_ >= (1U << 16))) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
}

Result<bool> FifoReader::fill(TimePoint deadline, const AliveCheck& alive) {
  if (!fd_.valid()) return internalError("read from a closed channel");
  dropConsumed();
  char chunk[16384];
  while (true) {
    ssize_t n = ::read(fd_.get(), chunk, sizeof(chunk));
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      // A FIFO with no writer yet reads as EOF too: only a hang-up that
      // poll() reports is one. Data that arrived since the read (the
      // compiler opened its end and wrote) is read on the next turn.
      const AfterEmptyRead after = hangUpOrData(fd_.get());
      if (after == AfterEmptyRead::kHangUp) return false;
      if (after == AfterEmptyRead::kData) continue;
    } else if (errno != EAGAIN && errno != EINTR) {
      return internalError(std::string("read from the compiler failed: ") + errnoText(errno));
    }
    KILN_RETURN_IF_ERROR(waitFor(fd_.get(), POLLIN, deadline, alive, "the compiler's output"));
  }
}

Result<bool> FifoReader::readAvailable(std::size_t maxBytes) {
  if (!fd_.valid()) return internalError("read from a closed channel");
  dropConsumed();
  char chunk[16384];
  std::size_t taken = 0;
  while (taken < maxBytes) {
    const std::size_t asked = std::min(sizeof(chunk), maxBytes - taken);
    ssize_t n = ::read(fd_.get(), chunk, asked);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      taken += static_cast<std::size_t>(n);
      // A pipe hands over all it holds up to the size asked: a shorter read
      // emptied it, and asking again would only return EAGAIN.
      if (static_cast<std::size_t>(n) < asked) return true;
      continue;
    }
    if (n == 0) {
      // As in fill(): EOF counts only once poll() reports the hang-up.
      const AfterEmptyRead after = hangUpOrData(fd_.get());
      if (after == AfterEmptyRead::kData) continue;
      return after != AfterEmptyRead::kHangUp;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return true;
    return internalError(std::string("read from the compiler failed: ") + errnoText(errno));
  }
  return true;
}

Result<std::optional<std::string>> FifoReader::readLine(std::size_t maxBytes, TimePoint deadline,
                                                        const AliveCheck& alive) {
  // Bytes after start_ already known to hold no '\n' (relative: fill() compacts).
  std::size_t scanned = 0;
  while (true) {
    auto newline = buffer_.find('\n', start_ + scanned);
    if (newline != std::string::npos && newline - start_ <= maxBytes) {
      std::string line = buffer_.substr(start_, newline - start_);
      start_ = newline + 1;
      return std::optional<std::string>(std::move(line));
    }
    if (buffer_.size() - start_ > maxBytes) {
      return invalidArgument("a line from the compiler is longer than " + std::to_string(maxBytes) +
                             " bytes");
    }
    scanned = buffer_.size() - start_;
    KILN_ASSIGN_OR_RETURN(bool more, fill(deadline, alive));
    if (!more) {
      if (buffer_.size() == start_) return std::optional<std::string>();
      return disconnected("the compiler's output ended inside a line after " +
                          std::to_string(buffer_.size() - start_) + " bytes");
    }
  }
}

Result<std::string> FifoReader::readExact(std::size_t n, TimePoint deadline,
                                          const AliveCheck& alive) {
  while (buffer_.size() - start_ < n) {
    KILN_ASSIGN_OR_RETURN(bool more, fill(deadline, alive));
    if (!more) {
      return disconnected("the compiler's output ended after " +
                          std::to_string(buffer_.size() - start_) + " of " + std::to_string(n) +
                          " expected bytes");
    }
  }
  std::string out = buffer_.substr(start_, n);
  start_ += n;
  return out;
}

}  // namespace kiln::mlgo_channel
