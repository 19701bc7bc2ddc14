// Same-host shortcut: a worker also listens on a Unix-domain socket (ZeroMQ
// ipc://, in Linux's abstract namespace so there is no file to clean up) and
// advertises it with the identity of its host. A client whose own identity
// matches connects there instead of through the TCP stack. Abstract sockets
// live in a network namespace, so the identity names the boot (boot id), the
// network namespace and the hostname: equal identities mean the socket is
// reachable. The choice is a pure function; reading the identity is not.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {

// What a worker advertises beside its (TCP) endpoint.
struct LocalRoute {
  std::string endpoint;      // ipc://... on the worker's host; empty = none
  std::string hostIdentity;  // hostIdentityText() of the worker; empty = unknown
};

// Whether the client may take a worker's local route.
enum class TransportChoice { kPreferLocal, kTcpOnly };

// "<boot id>/<network namespace inode>/<hostname>"; empty when any part is
// unknown, which disables the shortcut (an unknown part could hide a
// different host or namespace).
std::string hostIdentityText(const std::string& bootId, std::uint64_t networkNamespace,
                             const std::string& hostname);

// The address to connect to for the worker at `endpoint`: its local route
// when it is an ipc:// endpoint on a host identical to `myHostIdentity`,
// else `endpoint` itself.
std::string chooseWorkerAddress(const std::string& endpoint, const LocalRoute& route,
                                const std::string& myHostIdentity, TransportChoice choice);

// The local endpoint a worker listening on `listen` binds by default: an
// abstract ipc name unique to this process, or empty when `listen` is not
// TCP (inproc and ipc listeners have nothing to gain).
std::string defaultLocalEndpoint(const std::string& listen, std::uint32_t pid, std::uint64_t nonce);

// The calling thread's host identity (reads /proc and the hostname); empty
// when it cannot be determined.
std::string currentHostIdentity();

}  // namespace kiln
