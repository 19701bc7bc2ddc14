#include "common/metrics/http_serving.h"

#include <sys/socket.h>

#include <fmt/format.h>

namespace kiln {

int bindWithoutReusePort(httplib::Server& server, const std::string& host, int port) {
  server.set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  if (port == 0) return server.bind_to_any_port(host);
  return server.bind_to_port(host, port) ? port : -1;
}

Status serveOnThread(httplib::Server& server, std::thread& thread,
                     std::chrono::milliseconds startTimeout, std::string_view what, int port) {
  thread = std::thread([&server] { server.listen_after_bind(); });
  const auto deadline = std::chrono::steady_clock::now() + startTimeout;
  while (!server.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      stopServing(server, thread);
      return timeoutError(fmt::format("{}: the server on port {} did not start within {} ms", what,
                                      port, startTimeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return okStatus();
}

void stopServing(httplib::Server& server, std::thread& thread) {
  if (!thread.joinable()) return;
  while (true) {
    server.stop();
    for (int i = 0; i < 100 && server.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!server.is_running()) break;
  }
  thread.join();
}

}  // namespace kiln
