#include "common/transport/local_transport.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace kiln {

namespace {

bool startsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

std::string readBootId() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(file >> id)) return "";
  return id;
}

std::uint64_t networkNamespaceInode() {
  // Per thread: a thread that entered another namespace (setns) must not be
  // mistaken for the rest of its process.
  struct stat info {};
  if (::stat("/proc/thread-self/ns/net", &info) != 0 && ::stat("/proc/self/ns/net", &info) != 0) {
    return 0;
  }
  return info.st_ino;
}

}  // namespace

std::string hostIdentityText(const std::string& bootId, std::uint64_t networkNamespace,
                             const std::string& hostname) {
  if (bootId.empty() || networkNamespace == 0 || hostname.empty()) return "";
  return fmt::format("{}/{}/{}", bootId, networkNamespace, hostname);
}

std::string chooseWorkerAddress(const std::string& endpoint, const LocalRoute& route,
                                const std::string& myHostIdentity, TransportChoice choice) {
  if (choice == TransportChoice::kTcpOnly) return endpoint;
  if (!startsWith(route.endpoint, "ipc://") || route.endpoint.size() == 6) return endpoint;
  if (myHostIdentity.empty() || route.hostIdentity != myHostIdentity) return endpoint;
  return route.endpoint;
}

std::string defaultLocalEndpoint(const std::string& listen, std::uint32_t pid,
                                 std::uint64_t nonce) {
  if (!startsWith(listen, "tcp://")) return "";
  // '@' selects the abstract namespace; the nonce keeps a restarted worker
  // with a recycled pid from answering for its predecessor.
  return fmt::format("ipc://@kiln-worker-{}-{:016x}", pid, nonce);
}

std::string currentHostIdentity() {
  char hostname[256] = {};
  if (::gethostname(hostname, sizeof(hostname) - 1) != 0) return "";
  return hostIdentityText(readBootId(), networkNamespaceInode(), hostname);
}

}  // namespace kiln
