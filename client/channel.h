// A request/reply channel to one server over a DEALER socket. Many requests
// may be outstanding at once (pipelining); replies are matched by request id
// and those that arrive for another request are kept until asked for.
// The channel watches its connection (ZeroMQ socket events, plus ZMTP
// heartbeats for peers that vanish without closing it): once the server
// was connected and the connection drops, waiting requests fail at once
// with "disconnected" instead of at their deadline.
#pragma once

#include <capnp/message.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <zmq.hpp>

#include "common/clock.h"
#include "common/curve_keys.h"
#include "common/frame.h"
#include "common/identity.h"
#include "common/ids.h"
#include "common/readiness_poll.h"
#include "common/spin_before_sleep.h"
#include "common/status.h"
#include "common/stream_frames.h"

namespace kiln::client {

// Who a client's requests come from (common/identity.h): its secret, and the
// experiment it acts for with that experiment's key. Owned by the Client,
// which outlives its channels; each request is stamped with it.
struct RequestIdentity {
  Secret clientSecret = Secret::draw();
  std::string experiment;
  Secret experimentKey;  // empty until known (opened, or ClientOptions::experimentKey)

  void stamp(wire::Envelope::Builder envelope) const;
};

class Channel {
 public:
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  // `address` is where the socket connects when it differs from the
  // server's name `endpoint` (a same-host ipc:// route); empty = endpoint.
  // With `keys`, the connection is CURVE-authenticated and encrypted; a
  // server that refuses the handshake fails requests at once with
  // permission denied ("refused by authentication"), not at their deadline.
  Channel(zmq::context_t& zmq, std::string endpoint, const RequestIdentity& identity,
          FrameLimits limits, std::string address = {},
          std::optional<ClusterKeys> keys = std::nullopt);

  const std::string& endpoint() const { return endpoint_; }
  const std::string& address() const { return address_; }
  // The address ZeroMQ reported connecting to; empty until connected.
  const std::string& connectedAddress() {
    readEvents();
    return connectedAddress_;
  }

  // Starts an envelope for a new request; fill its request and call send().
  // `target` names an underlying worker on a nesting host (0: the server itself).
  wire::Envelope::Builder begin(capnp::MessageBuilder& builder, Duration timeout,
                                std::uint64_t target = 0);
  // Sends the request built in `builder`; returns its id for await().
  Result<std::uint64_t> send(capnp::MessageBuilder& builder);
  // Waits for the reply to `requestId` until `deadline`. An error reply comes
  // back as its Status; silence as a timeout that names the server.
  Result<InboundMessage> await(std::uint64_t requestId, TimePoint deadline);
  // Sends and waits.
  Result<InboundMessage> call(capnp::MessageBuilder& builder, Duration timeout);
  // Moves this channel's requests to a same-host direct channel, if its
  // server offers one (worker/direct_channels.h): a request and its reply
  // then skip ZeroMQ's I/O threads. Call it before any request is
  // outstanding (a request sent on one transport must not overtake one sent
  // on the other). On failure the channel stays on ZeroMQ.
  Status openDirect(Duration timeout);
  bool direct() const { return directFd_ >= 0; }
  // How long await() polls a direct channel for the reply before it sleeps
  // (common/spin_before_sleep.h); zero (the default) never polls.
  // Never on a thread confined to one CPU (SpinBeforeSleep::forThisThread).
  void spinForReplies(Duration window) { replySpin_ = SpinBeforeSleep::forThisThread(window); }
  // Forgets a request whose reply is no longer wanted.
  void abandon(std::uint64_t requestId);
  // Requests sent whose replies were not yet collected by await().
  std::size_t outstanding() const { return pending_.size() + arrived_.size(); }
  // The connection dropped after it was up, and has not come back.
  bool peerLost() {
    readEvents();
    return lost_;
  }
  // Treats the server as lost although its connection is up: a process
  // whose loop is stuck still answers ZMTP heartbeats from ZeroMQ's own
  // thread. Waiting and later requests fail at once with "disconnected"
  // until the server connects again.
  void markLost() { lost_ = true; }

 private:
  Status unwrapError(const InboundMessage& message) const;
  void readEvents();
  // Takes one received frame: the reply to `requestId` is returned, any
  // other reply kept for later.
  std::optional<Result<InboundMessage>> take(const void* data, std::size_t size,
                                             std::uint64_t requestId);
  // Reads the direct channel; sets lost_ when it dropped.
  std::optional<Result<InboundMessage>> readDirect(std::uint64_t requestId);
  // Polls the direct channel for the reply to `requestId` for as long as
  // replySpin_ says, without sleeping.
  std::optional<Result<InboundMessage>> spinForReply(std::uint64_t requestId);
  Status connectDirect(const std::string& address, const std::string& token, TimePoint deadline);

  std::string endpoint_;
  std::string address_;
  std::string connectedAddress_;
  const RequestIdentity& identity_;
  FrameLimits limits_;
  zmq::socket_t socket_;
  zmq::socket_t monitor_;  // PAIR receiving socket_'s connection events
  // Polls socket_ (until direct), monitor_ if there is one, directFd_ if open.
  void pollItems();
  ReadinessPoll poll_;
  std::size_t socketIndex_ = 0;
  std::size_t monitorIndex_ = 0;
  std::size_t directIndex_ = 0;
  int directFd_ = -1;
  StreamFrameReader directReader_;
  StreamFrameWriter directWriter_;
  SpinBeforeSleep replySpin_{Duration::zero()};
  bool connected_ = false;
  bool lost_ = false;
  bool curve_ = false;
  bool handshaken_ = false;      // a handshake with the server succeeded once
  Status refused_ = okStatus();  // the latest handshake refusal, until one succeeds
  int vagueFailures_ = 0;        // handshakes failed without detail since the last success
  std::uint64_t nextRequestId_ = 1;
  std::uint64_t lastBegun_ = 0;
  std::unordered_map<std::uint64_t, bool> pending_;            // sent, not yet received
  std::unordered_map<std::uint64_t, InboundMessage> arrived_;  // received early
};

}  // namespace kiln::client
