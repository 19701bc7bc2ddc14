#include "common/transport/listen_exposure.h"

#include "common/transport/tcp_stream.h"

namespace kiln {

bool isLoopbackEndpoint(const std::string& endpoint) {
  if (endpoint.starts_with("inproc://") || endpoint.starts_with("ipc://")) return true;
  const std::optional<TcpHostPort> address = splitTcpEndpoint(endpoint);
  if (!address) return false;
  const std::string& host = address->host;
  if (host == "localhost" || host == "::1") return true;
  // 127.0.0.0/8, in dotted-quad form only (no interface names, no wildcards).
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

void announceExposure(const std::string& role, const std::string& endpoint, bool secured,
                      Logger& logger) {
  if (secured) {
    logger->info("{} listens on {} with CURVE: only peers holding the cluster key get in", role,
                 endpoint);
    return;
  }
  if (isLoopbackEndpoint(endpoint)) return;
  logger->warn("!!! {} listens on {} beyond loopback WITHOUT authentication or encryption !!!",
               role, endpoint);
  logger->warn("!!! anyone who can reach this port can run sessions, read and change traffic");
  logger->warn(
      "!!! make a cluster key with `kiln keygen --out cluster.key` and pass --key-file "
      "cluster.key to every kiln process (docs/security.md)");
}

}  // namespace kiln
