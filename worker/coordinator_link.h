// The worker's side of its registration with the coordinator (Paranoid
// Pirate): register on a fresh DEALER socket, then heartbeat on it every
// interval with the current load; any message from the coordinator counts as
// its heartbeat. Silence for `liveness` intervals, or a DISCONNECT, means
// re-register on a new socket after a back-off of 1 s doubling to 32 s.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/curve_keys.h>
#include <kiln/ids.h>
#include <kiln/logging.h>
#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "common/types/underlying_wire.h"

namespace kiln {

struct WorkerAdvert {
  std::string endpoint;
  std::uint32_t slots = 1;
  std::uint32_t maxSessions = 0;
  std::vector<std::string> sessionTypes;
  std::string version;
  std::string hostname;
  std::uint32_t pid = 0;
  bool nesting = false;
  std::string localEndpoint;  // for clients on this host (common/transport/local_transport.h)
  std::string hostIdentity;
  Secret token;  // the operator's registration token; empty = none (common/security/worker_token.h)
  PassKey passKey;  // what the coordinator makes this worker's client passes with
  // Set: `token` is read again before each registration (the operator may
  // write or replace the file while this worker waits).
  std::function<Secret()> reloadToken;
  // Its --max-message-bytes, which clients learn from their placements.
  std::uint64_t maxMessageBytes = 0;
};

struct LinkTiming {
  Duration heartbeatInterval = std::chrono::seconds(1);
  int liveness = 3;
  Duration minBackoff = std::chrono::seconds(1);
  Duration maxBackoff = std::chrono::seconds(32);
};

struct LoadReport {
  LoadFigures total;
  std::vector<UnderlyingStatus> underlying;  // a nesting host's underlying workers
};

// Requests the coordinator sends down the link (create/release underlying
// workers); the handler answers through CoordinatorLink::sendReply.
using LinkRequestHandler = std::function<void(InboundMessage)>;

// How long a worker may go without hearing its coordinator before its
// clients may be restoring its sessions elsewhere: the coordinator declares
// a worker lost after `liveness` silent intervals, and a client drops a
// silent connection after the ZMTP timeout; this is a little less than both.
Duration cutOffAfter(Duration interval, int liveness);

class CoordinatorLink {
 public:
  CoordinatorLink(zmq::context_t& context, std::string coordinatorEndpoint, WorkerAdvert advert,
                  LinkTiming timing, const Clock& clock, Logger logger,
                  LinkRequestHandler onRequest = {},
                  std::optional<ClusterKeys> keys = std::nullopt);

  // The socket to poll; null while backing off.
  zmq::socket_t* socket() { return socket_ ? &*socket_ : nullptr; }
  // Counts sends, receives and new sockets (ReadinessPoll's kUntouched).
  std::uint64_t socketUses() const { return socketUses_; }
  void onReadable(const FrameLimits& limits);
  void tick(const LoadReport& load);
  // Answers a request that came down the link (dropped while re-registering).
  void sendReply(zmq::message_t frame);
  std::optional<WorkerId> workerId() const { return workerId_; }
  int registrations() const { return registrations_; }
  // Since when this worker is cut off: once registered, the coordinator
  // went unheard for cutOffAfter() (it has declared this worker lost, or is
  // about to). The time returned is when the cut began at the latest (the
  // coordinator pings every interval): a client heard from after it still
  // reaches this worker. Nullopt while the coordinator is heard.
  std::optional<TimePoint> cutOffSince() const;

 private:
  enum class State { kBackingOff, kRegistering, kRegistered };
  void connect(const LoadReport& load);
  void dropAndBackOff(const std::string& reason);
  void send(capnp::MessageBuilder& builder);

  zmq::context_t& context_;
  std::string endpoint_;
  WorkerAdvert advert_;
  LinkTiming timing_;
  const Clock& clock_;
  Logger logger_;
  LinkRequestHandler onRequest_;
  std::optional<ClusterKeys> keys_;  // CURVE client keys; none = plaintext
  std::optional<zmq::socket_t> socket_;
  State state_ = State::kBackingOff;
  Duration backoff_;
  TimePoint retryAt_{};
  TimePoint lastHeard_{};  // or the last registration attempt
  TimePoint heardAt_{};    // the last message from a coordinator
  TimePoint nextHeartbeat_{};
  std::optional<WorkerId> workerId_;
  // The coordinator's own interval (its Registered answer): it pings no more
  // often than that, so silence is judged by the longer of the two.
  Duration coordinatorInterval_{};
  Duration lastCoordinatorInterval_{};  // kept while re-registering
  int registrations_ = 0;
  std::uint64_t socketUses_ = 0;
};

}  // namespace kiln
