#include "tests/observe/http_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace kiln::observe_test {

namespace {

bool complete(const std::string& raw) {
  auto split = raw.find("\r\n\r\n");
  if (split == std::string::npos) return false;
  auto length = raw.find("Content-Length: ");
  if (length == std::string::npos || length > split) return false;  // read to the close
  std::size_t body = std::strtoul(raw.c_str() + length + 16, nullptr, 10);
  return raw.size() >= split + 4 + body;
}

}  // namespace

HttpReply exchange(int port, const std::string& bytes, int timeoutSeconds) {
  HttpReply reply;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return reply;
  timeval timeout{timeoutSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return reply;
  }
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  char buffer[16384];
  for (int reads = 0; reads < 100000; ++reads) {  // bounded; 5 s per read at most
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    reply.raw.append(buffer, static_cast<std::size_t>(n));
    if (complete(reply.raw)) break;
  }
  ::close(fd);
  if (reply.raw.rfind("HTTP/1.", 0) == 0 && reply.raw.size() > 12) {
    reply.status = std::atoi(reply.raw.c_str() + 9);
  }
  auto split = reply.raw.find("\r\n\r\n");
  if (split != std::string::npos) reply.body = reply.raw.substr(split + 4);
  return reply;
}

HttpReply get(int port, const std::string& path) {
  return exchange(port,
                  "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
}

double sampleValue(const std::string& exposition, const std::string& series) {
  std::istringstream lines(exposition);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series, 0) != 0 || line.size() <= series.size()) continue;
    if (line[series.size()] != ' ') continue;  // kiln_slots must not match kiln_slots_x
    return std::strtod(line.c_str() + series.size() + 1, nullptr);
  }
  return -1;
}

}  // namespace kiln::observe_test
