#include "tests/deploy/deploy_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace kiln::deploytest {

ProcessOutput run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  auto output = runSubprocess(argv, timeout);
  if (output.ok()) return std::move(output).value();
  ProcessOutput failed;
  failed.status.exitCode = 127;
  failed.stderrText = output.status().toString();
  return failed;
}

std::string hostCommand(const std::string& kilnBinary) {
  // `kiln nest --help` exits 0 even without nest (CLI11 then prints the
  // top-level help), so look for nest among the listed subcommands.
  auto help = run({kilnBinary, "--help"}, std::chrono::seconds(10));
  std::regex listed(R"((^|\n)\s+nest\s)");
  return help.status.success() && std::regex_search(help.stdoutText, listed) ? "nest" : "worker";
}

int freeTcpPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

std::vector<pid_t> processesWithEnvironment(const std::string& entry) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = dir.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream environ(dir.path() / "environ", std::ios::binary);
    std::string variable;
    while (std::getline(environ, variable, '\0')) {
      if (variable == entry) {
        found.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
    }
  }
  return found;
}

void stopProcess(Subprocess& process, std::chrono::milliseconds grace) {
  if (!process.running()) return;
  ::kill(process.pid(), SIGTERM);
  auto exited = process.waitFor(grace);
  if (!exited.ok()) process.kill();
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace kiln::deploytest
