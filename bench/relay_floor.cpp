#include "bench/relay_floor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/stats.h"
#include "compilers/mlgo_channel/fifo.h"

namespace kiln::bench {

namespace {

using Clock = std::chrono::steady_clock;
using mlgo_channel::UniqueFd;

// Sizes of an MLGO exchange: the advice out, a decision's features back.
constexpr std::size_t kQuestionBytes = 16;
constexpr std::size_t kAnswerBytes = 331;
// No wait in a healthy run comes near this; a stuck one fails instead.
constexpr int kWaitMs = 5000;

// Waits for `fd` to be readable, then reads exactly `size` bytes. False on
// EOF, error or a silent peer.
bool readExactly(int fd, char* out, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    pollfd item{fd, POLLIN, 0};
    if (::poll(&item, 1, kWaitMs) <= 0) return false;
    const ssize_t n = ::read(fd, out + got, size - got);
    if (n <= 0) {
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const char* data, std::size_t size) {
  std::size_t put = 0;
  while (put < size) {
    const ssize_t n = ::write(fd, data + put, size - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    put += static_cast<std::size_t>(n);
  }
  return true;
}

struct Pipe {
  UniqueFd read, write;
};

Result<Pipe> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return internalError(fmt::format("pipe2 failed: {}", std::strerror(errno)));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Answers each question after `compute` of busy work, until its input
// closes: a compiler between two decisions.
void computeAndAnswer(int questions, int answers, std::chrono::microseconds compute) {
  std::array<char, kQuestionBytes> question{};
  const std::array<char, kAnswerBytes> answer{};
  while (readExactly(questions, question.data(), question.size())) {
    const auto until = Clock::now() + compute;
    while (Clock::now() < until) {
    }
    if (!writeAll(answers, answer.data(), answer.size())) return;
  }
}

// One stand-in compiler on its own pipes; closing `toCompiler` stops it.
struct Compiler {
  UniqueFd toCompiler, fromCompiler;
  std::thread thread;

  static Result<std::unique_ptr<Compiler>> start(std::chrono::microseconds compute) {
    KILN_ASSIGN_OR_RETURN(Pipe in, makePipe());
    KILN_ASSIGN_OR_RETURN(Pipe out, makePipe());
    auto compiler = std::make_unique<Compiler>();
    compiler->toCompiler = std::move(in.write);
    compiler->fromCompiler = std::move(out.read);
    compiler->thread =
        std::thread([compute, questions = std::move(in.read), answers = std::move(out.write)]() {
          computeAndAnswer(questions.get(), answers.get(), compute);
        });
    return compiler;
  }
  ~Compiler() {
    toCompiler.reset();
    if (thread.joinable()) thread.join();
  }
};

// Times `rounds` asks of `ask` (a question out, its answer back), less the compute.
template <class Ask>
Result<double> medianRoundTripUs(unsigned rounds, std::chrono::microseconds compute, Ask ask) {
  std::vector<std::int64_t> nanos;
  nanos.reserve(rounds);
  for (unsigned i = 0; i < rounds; ++i) {
    const auto sent = Clock::now();
    if (!ask()) return internalError("the relay floor's stand-in compiler stopped answering");
    nanos.push_back(std::chrono::nanoseconds(Clock::now() - sent - compute).count());
  }
  return summarize(nanos).p50us;
}

}  // namespace

Result<RelayFloor> measureRelayFloor(std::chrono::microseconds compute, unsigned rounds) {
  RelayFloor floor;
  std::array<char, kQuestionBytes> question{};
  std::array<char, kAnswerBytes> answer{};
  {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Compiler> compiler, Compiler::start(compute));
    KILN_ASSIGN_OR_RETURN(
        floor.directUs, medianRoundTripUs(rounds, compute, [&] {
          return writeAll(compiler->toCompiler.get(), question.data(), question.size()) &&
                 readExactly(compiler->fromCompiler.get(), answer.data(), answer.size());
        }));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Compiler> compiler, Compiler::start(compute));
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return internalError(fmt::format("socketpair failed: {}", std::strerror(errno)));
  }
  UniqueFd client(pair[0]), middleEnd(pair[1]);
  // The middle passes each question on and each answer back, and stops when
  // the client's end closes.
  std::thread middle([&] {
    std::array<char, kAnswerBytes> bytes{};
    while (readExactly(middleEnd.get(), bytes.data(), kQuestionBytes) &&
           writeAll(compiler->toCompiler.get(), bytes.data(), kQuestionBytes) &&
           readExactly(compiler->fromCompiler.get(), bytes.data(), kAnswerBytes) &&
           writeAll(middleEnd.get(), bytes.data(), kAnswerBytes)) {
    }
  });
  auto relayed = medianRoundTripUs(rounds, compute, [&] {
    return writeAll(client.get(), question.data(), question.size()) &&
           readExactly(client.get(), answer.data(), answer.size());
  });
  ::shutdown(client.get(), SHUT_RDWR);
  middle.join();
  KILN_ASSIGN_OR_RETURN(floor.relayUs, std::move(relayed));
  return floor;
}

}  // namespace kiln::bench
