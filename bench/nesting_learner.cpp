#include "bench/nesting_learner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kiln::bench {
namespace {

// The demo's policy: Autophase's 56 counts and the episode's progress in,
// 142 passes out.
constexpr unsigned kInputs = 57, kHidden = 64, kActions = 142;

bool readAll(int fd, void* data, std::size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The child: an update per request, until the pipe closes.
[[noreturn]] void serveUpdates(std::uint64_t seed, unsigned batchRows, int requests, int replies) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  LearnerUpdate learner(seed, batchRows);
  std::uint32_t epochs = 0;
  while (readAll(requests, &epochs, sizeof(epochs))) {
    learner.run(epochs);
    const char done = 1;
    if (!writeAll(replies, &done, 1)) break;
  }
  ::_exit(0);
}

}  // namespace

LearnerUpdate::LearnerUpdate(std::uint64_t seed, unsigned batchRows)
    : random_(seed),
      network_({kInputs, kHidden, kHidden, kActions}, random_, 0.01f),
      optimizer_(network_.parameters().size(), 3e-4f),
      rows_(std::max(batchRows, 1u)),
      batch_(static_cast<std::size_t>(rows_) * kInputs),
      outputGradient_(static_cast<std::size_t>(rows_) * kActions),
      gradient_(network_.parameters().size()) {
  std::normal_distribution<float> normal;
  for (float& x : batch_) x = normal(random_);
  for (float& g : outputGradient_) g = normal(random_) / static_cast<float>(rows_);
}

void LearnerUpdate::run(unsigned epochs) {
  for (unsigned e = 0; e < epochs; ++e) {
    network_.forward(batch_, rows_, activations_);
    std::fill(gradient_.begin(), gradient_.end(), 0.0f);
    network_.backward(activations_, outputGradient_, gradient_);
    learn::clipGradientNorm(gradient_, 0.5f);
    optimizer_.step(network_.parameters(), gradient_);
  }
}

Result<std::unique_ptr<LearnerProcess>> LearnerProcess::start(std::uint64_t seed,
                                                              unsigned batchRows) {
  int requests[2], replies[2];
  if (::pipe2(requests, O_CLOEXEC) != 0) return internalError("no pipe for a learner");
  if (::pipe2(replies, O_CLOEXEC) != 0) {
    ::close(requests[0]);
    ::close(requests[1]);
    return internalError("no pipe for a learner");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {requests[0], requests[1], replies[0], replies[1]}) ::close(fd);
    return internalError(fmt::format("cannot fork a learner: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(requests[1]);
    ::close(replies[0]);
    serveUpdates(seed, batchRows, requests[0], replies[1]);
  }
  ::close(requests[0]);
  ::close(replies[1]);
  return std::unique_ptr<LearnerProcess>(new LearnerProcess(pid, requests[1], replies[0]));
}

LearnerProcess::~LearnerProcess() {
  ::close(requests_);  // the child's read ends: it exits
  ::close(replies_);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

Status LearnerProcess::update(unsigned epochs) {
  const std::uint32_t request = epochs;
  char done = 0;
  if (!writeAll(requests_, &request, sizeof(request)) || !readAll(replies_, &done, 1)) {
    return internalError(fmt::format("the learner process {} died", pid_));
  }
  return okStatus();
}

}  // namespace kiln::bench
