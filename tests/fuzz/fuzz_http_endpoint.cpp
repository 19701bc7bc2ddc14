// The coordinator's HTTP endpoint as a browser or a scraper meets it: the
// input is the raw bytes of one connection (request lines, headers, query
// strings, pipelined requests, bodies) sent over loopback to a real
// metrics::HttpEndpoint serving the coordinator's routes (/metrics, /,
// /dashboard, /api/status; CoordinatorObservability), started once per
// process. cpp-httplib parses the request; kiln's side is the router in
// front of it (404/405 rules, GET and HEAD only) and the handlers.
//
// When a connection is over cannot be told from outside: the server keeps
// it open for the next request, and it drops its answer to a client that
// half-closed (httplib checks the peer is alive before writing). So the
// client waits until the server's socket has received all it sent (nothing
// left unacknowledged) and then until every server thread sleeps (none
// runnable: each is back at its poll or its task queue, its answer to what
// was sent written), reads what arrived and closes.
//
// Properties checked: the server quiets down within 3 s of the input; every
// answer starts with an HTTP/1.1 status line; a 200 answers only GET or
// HEAD; no handler fails (500); no descriptor or thread outlives its
// connection by more than 2 s.
#include <arpa/inet.h>
#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <kiln/clock.h>
#include <kiln/logging.h>
#include "coordinator/coordinator_core.h"
#include "coordinator/coordinator_metrics.h"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_http_endpoint: property violated: %s\n", what);
    std::abort();
  }
}

int openDescriptors() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (dirent* entry = ::readdir(dir)) count += entry->d_name[0] != '.';
    ::closedir(dir);
  }
  return count - 1;  // the directory's own
}

// Threads of this process other than the caller, and how many are runnable.
struct ThreadStates {
  int others = 0;
  int runnable = 0;
};

ThreadStates threadStates() {
  ThreadStates states;
  const std::string self = std::to_string(::gettid());
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.' || self == entry->d_name) continue;
      std::ifstream stat(std::string("/proc/self/task/") + entry->d_name + "/stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      std::size_t close = text.rfind(')');  // the state follows "(name) "
      if (close == std::string::npos || close + 2 >= text.size()) continue;  // it just exited
      ++states.others;
      states.runnable += text[close + 2] == 'R';
    }
    ::closedir(dir);
  }
  return states;
}

// Until no other thread is runnable twice in a row, at most 3 s.
bool quiet() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int calm = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    calm = threadStates().runnable == 0 ? calm + 1 : 0;
    if (calm == 2) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return false;
}

// Until the server's socket has taken every byte sent (on loopback, acknowledged).
bool delivered(int fd) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    int unacknowledged = 0;
    if (::ioctl(fd, SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  return false;
}

// Until what is open is back to `descriptors` and `threads`, at most 2 s: the
// server closes its side of a connection just after the client's close.
bool settled(int descriptors, int threads) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (openDescriptors() != descriptors || threadStates().others != threads) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

struct Fixture {
  Fixture() {
    auto started =
        kiln::CoordinatorObservability::start("127.0.0.1:0", clock, kiln::makeNullLogger("fuzz"));
    require(started.ok(), "the coordinator's endpoint does not start");
    observability = std::move(started).value();
    // /api/status and /metrics serve what an empty coordinator publishes.
    kiln::CoordinatorCore core(kiln::CoordinatorConfig{}, clock, kiln::makeNullLogger("fuzz"));
    observability->onTick(core);
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(observability->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  // What is open with no connection, once one connection has come and gone.
  void measureIdle();
  kiln::FakeClock clock;
  std::unique_ptr<kiln::CoordinatorObservability> observability;
  sockaddr_in address{};
  int descriptors = 0;
  int threads = 0;
};

// Sends `request` on a new connection, returns what the server answered
// once it is quiet, and closes.
std::string converse(const sockaddr_in& address, std::string_view request) {
  int fd = -1;
  int error = 0;
  // A failed connect leaves its socket unusable: each attempt gets a new one.
  // Waiting out a moment without a free local port, or a listen backlog the
  // server's accept thread has not drained yet (both seen beside the test
  // suite), is not the endpoint's fault; refusing for 2 s is.
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    require(fd >= 0, "no socket for the client");
    // Closed with a reset: tens of thousands of connections a run would
    // otherwise leave as many local ports in TIME_WAIT.
    linger reset{1, 0};
    (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) break;
    error = errno;
    ::close(fd);
    fd = -1;
    if (std::chrono::steady_clock::now() > giveUp) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (fd < 0) std::fprintf(stderr, "connect: %s\n", std::strerror(error));
  require(fd >= 0, "the endpoint refuses connections for 2 s");
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<std::size_t>(n);
  }
  require(delivered(fd) && quiet(), "the server is still busy 3 s after the input");
  std::string answer;
  char buffer[16384];
  while (answer.size() < (1u << 20)) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n <= 0) break;  // nothing more yet, the end, or a reset after unread input
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

void Fixture::measureIdle() {
  std::string answer = converse(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  require(answer.starts_with("HTTP/1.1 200"), "the endpoint does not serve /metrics");
  require(quiet(), "the server is still busy 3 s after the first connection");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its close, see settled()
  descriptors = openDescriptors();
  threads = threadStates().others;
}

void checkAnswer(std::string_view request, std::string_view answer) {
  constexpr std::string_view kStatusLine = "HTTP/1.1 ";
  if (answer.size() < kStatusLine.size() + 3) {
    require(kStatusLine.starts_with(answer.substr(0, kStatusLine.size())),
            "an answer does not start with an HTTP/1.1 status line");
    return;  // nothing, or cut short by the server's close
  }
  require(answer.starts_with(kStatusLine), "an answer does not start with an HTTP/1.1 status line");
  std::string_view code = answer.substr(kStatusLine.size(), 3);
  for (char c : code) require(c >= '0' && c <= '9', "a status code is not three digits");
  require(code != "500", "a handler failed (500)");
  if (code == "200") {
    // The first word of the request line; httplib skips spaces and tabs around words.
    std::size_t start = request.find_first_not_of(" \t");
    std::string_view method =
        start == std::string_view::npos
            ? ""
            : request.substr(start, request.find_first_of(" \t\r\n", start) - start);
    require(method == "GET" || method == "HEAD", "a 200 answers a method other than GET or HEAD");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Fixture* fixture = [] {  // one server for the process: its threads stay put
    auto* made = new Fixture();
    made->measureIdle();
    return made;
  }();
  std::string_view request(reinterpret_cast<const char*>(data), size);
  checkAnswer(request, converse(fixture->address, request));
  require(settled(fixture->descriptors, fixture->threads),
          "a descriptor or thread outlived its connection");
  return 0;
}
