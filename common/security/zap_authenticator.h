// Who may talk to a CURVE server: one ZapAuthenticator per ZeroMQ context
// answers the context's ZAP requests (RFC 27, inproc://zeromq.zap.01) on
// its own thread, accepting only clients that present the cluster public key
// or a key listed in the authorized keys. Peers that fail earlier, in the
// handshake itself (no key, another cluster's key), never reach ZAP; the
// authenticator also reads the watched server sockets' monitor events to log
// those. Refusals are logged with the peer address where ZeroMQ gives it,
// at most once per peer and reason every 10 s (a refused peer reconnects
// every 100 ms), and counted.
//
// ZAP request frames: "1.0", request id, domain, address, routing id,
// mechanism, credentials (CURVE: the 32-byte client public key). Reply:
// "1.0", request id, status ("200" / "400"), text, user id, metadata.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include <kiln/curve_keys.h>
#include <kiln/logging.h>
#include <kiln/status.h>
#include "common/base/mailbox.h"

namespace kiln {

class ZapAuthenticator {
 public:
  // Binds the context's ZAP endpoint before returning, so no server socket
  // of the context handshakes unguarded. Accepts `cluster`'s public key and
  // the Z85 public keys in `alsoAuthorized`. Must outlive every server
  // socket it guards, and be destroyed before the context.
  static Result<std::unique_ptr<ZapAuthenticator>> start(
      zmq::context_t& context, const ClusterKeys& cluster,
      const std::vector<std::string>& alsoAuthorized, Logger logger);
  ~ZapAuthenticator();
  ZapAuthenticator(const ZapAuthenticator&) = delete;
  ZapAuthenticator& operator=(const ZapAuthenticator&) = delete;

  // Logs the handshake failures of `server` (a socket of the same context)
  // that never reach ZAP. Call from the thread that owns `server`.
  void watch(zmq::socket_t& server, const std::string& role);

  std::uint64_t refusals() const { return refusals_.load(); }

 private:
  struct Watched {
    zmq::socket_t monitor;
    std::string role;
  };
  ZapAuthenticator(zmq::context_t& context, Logger logger);
  void run();
  void answer();
  void readEvents(Watched& watched, bool& stopped);
  void refuse(const std::string& who, const std::string& reason);

  zmq::context_t& context_;
  std::set<std::string> authorized_;  // 32-byte binary keys
  std::string clusterKey_;            // the cluster's, binary: its peers are kZapClusterUser
  Logger logger_;
  zmq::socket_t handler_;  // REP on the ZAP endpoint
  Mailbox<Watched> newWatches_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> refusals_{0};
  std::atomic<std::uint64_t> monitors_{0};
  struct Recent {
    std::chrono::steady_clock::time_point logged;
    std::uint64_t quiet = 0;  // refusals not logged since
  };
  std::map<std::string, Recent> recent_;  // by peer and reason; the thread's own
  std::thread thread_;
};

// A server socket's security: plaintext when `keys` is empty.
struct ServerSecurity {
  std::optional<ClusterKeys> keys;
  ZapAuthenticator* authenticator = nullptr;  // not owned; required with keys
};

// Applies `security` to `server` before it binds (see ZapAuthenticator::watch).
Status secureServer(zmq::socket_t& server, const ServerSecurity& security, const std::string& role);

}  // namespace kiln
