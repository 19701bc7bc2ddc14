// A request/reply channel to one server, as the client's Client and Session
// see it. Many requests may be outstanding at once (pipelining); replies are
// matched by request id and those that arrive for another request are kept
// until asked for. How the bytes travel is the implementation's business:
// ZeroMQ and same-host direct channels (client/zmq_channel.h), or a fake
// server in a unit test. Channels come from a ChannelFactory, the client's
// seam for tests and for embedding another transport.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "common/transport/readiness_poll.h"

namespace kiln::client {

// A client's pass on one worker, from a placement there (common/security/identity.h).
struct WorkerPass {
  ClientId client;
  ClientPass pass{};
};

// Who a client's requests come from (common/security/identity.h): its secret, and the
// experiment it acts for with that experiment's key. Owned by the Client,
// which outlives its channels; each request is stamped with it.
struct RequestIdentity {
  Secret clientSecret = Secret::draw();
  std::string experiment;
  Secret experimentKey;  // empty until known (opened, or ClientOptions::experimentKey)
  // Worker endpoint -> the pass its last placement carried. Only the
  // coordinator sees the secret: a worker sees its own pass, which is good
  // nowhere else, or no client at all.
  std::map<std::string, WorkerPass> passes;
  // Servers the user named (Client::startSessionOn) that the coordinator
  // does not list, such as a standalone worker or a relay: the user chose
  // them, and they can know the client only by its secret.
  std::set<std::string> named;

  // For the coordinator: the secret, and the experiment's key.
  void stamp(wire::Envelope::Builder envelope) const;
  // For the worker at `endpoint`: its pass, if a placement gave one; the
  // secret if the user named it and the coordinator does not list it. And
  // the experiment's pass for that endpoint, never its key: a nesting host
  // checks it, and it is good on no other host nor at the coordinator.
  void stampForWorker(wire::Envelope::Builder envelope, const std::string& endpoint) const;

 private:
  // The experiment's pass for `endpoint` (common/security/identity.h), made once per
  // endpoint and key: a keyed hash per request would cost ~0.5 us.
  const std::string& experimentPassFor(const std::string& endpoint) const;
  struct MadePass {
    std::string key;  // the experiment key's bytes it was made from
    std::string pass;
  };
  mutable std::map<std::string, MadePass> experimentPasses_;
};

class Channel {
 public:
  static constexpr std::uint64_t kNoRequest = 0;  // request ids start at 1

  Channel(std::string endpoint, const RequestIdentity& identity, FrameLimits limits);
  virtual ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The server's name (its advertised endpoint).
  const std::string& endpoint() const { return endpoint_; }
  // This channel's server is the coordinator: its requests carry the
  // client's secret. Every other channel's carry at most a worker's pass.
  void carrySecret() { carriesSecret_ = true; }

  // The server's own --max-message-bytes, as its placement said (0 = not
  // known): send() refuses a larger request before it leaves. Over ZeroMQ
  // the server would cut a frame over twice its limit, and that looks here
  // like a lost server, whose sessions would be restored for nothing.
  void limitRequests(std::uint64_t serverMaxMessageBytes) { serverLimit_ = serverMaxMessageBytes; }

  // Starts an envelope for a new request; fill its request and call send().
  // `target` names an underlying worker on a nesting host (0: the server itself).
  wire::Envelope::Builder begin(capnp::MessageBuilder& builder, Duration timeout,
                                std::uint64_t target = 0);
  // Sends the request built in `builder`; returns its id for await().
  virtual Result<std::uint64_t> send(capnp::MessageBuilder& builder) = 0;
  // Waits for the reply to `requestId` until `deadline`. An error reply comes
  // back as its Status; silence as a timeout that names the server; a server
  // known gone as "disconnected".
  virtual Result<InboundMessage> await(std::uint64_t requestId, TimePoint deadline) = 0;
  // Sends and waits.
  Result<InboundMessage> call(capnp::MessageBuilder& builder, Duration timeout);
  // Forgets a request whose reply is no longer wanted.
  void abandon(std::uint64_t requestId);
  // Requests sent whose replies were not yet collected by await().
  std::size_t outstanding() const { return pending_.size() + arrived_.size(); }

  // The connection dropped after it was up, and has not come back.
  virtual bool peerLost() = 0;
  // Treats the server as lost although its connection is up (a process
  // whose loop is stuck): waiting and later requests fail at once with
  // "disconnected" until the server connects again.
  virtual void markLost() = 0;
  // Where the connection went (an ipc:// address for a same-host worker);
  // empty until connected.
  virtual std::string connectedAddress() = 0;
  // Moves this channel's requests to a faster same-host path if the server
  // offers one; call it before any request is outstanding. On failure the
  // channel keeps working as before.
  virtual Status openDirect(Duration timeout);
  virtual bool direct() const { return false; }
  // How long await() may poll for a reply before it sleeps (zero: never).
  virtual void spinForReplies(Duration window);

  // Waiting on many channels at once (Client::readyReplies). readAvailable()
  // takes every reply that arrived, without blocking; then replyReady() says
  // whether await(requestId) would return at once: its reply (or an error
  // for it) came, or the server is known lost. addTo() adds what replies
  // arrive on to `poll`. By default a channel reads nothing, adds nothing
  // and is always ready: await() then blocks as before.
  virtual void readAvailable();
  virtual bool replyReady(std::uint64_t requestId);
  virtual void addTo(ReadinessPoll& poll);

 protected:
  // Records a request as sent: its reply is now expected.
  void expect(std::uint64_t requestId) { pending_.emplace(requestId, true); }
  // Takes a reply that was kept because it came while another was awaited.
  std::optional<Result<InboundMessage>> takeArrived(std::uint64_t requestId);
  bool hasArrived(std::uint64_t requestId) const { return arrived_.contains(requestId); }
  bool isPending(std::uint64_t requestId) const { return pending_.contains(requestId); }
  // Stops expecting `requestId` (it failed as a whole: timeout, loss).
  void forget(std::uint64_t requestId) { pending_.erase(requestId); }
  // invalid-argument naming the size, the server's limit and its flag when
  // the request in `builder` is over limitRequests(); ok otherwise.
  Status checkRequestSize(capnp::MessageBuilder& builder) const;
  // Takes one received frame: the reply to `requestId` is returned, any
  // other expected reply kept for later, anything else dropped.
  // kNoRequest keeps every reply.
  std::optional<Result<InboundMessage>> take(const void* data, std::size_t size,
                                             std::uint64_t requestId);

 private:
  Status unwrapError(const InboundMessage& message) const;

  std::string endpoint_;
  const RequestIdentity& identity_;
  bool carriesSecret_ = false;
  FrameLimits limits_;
  std::uint64_t serverLimit_ = 0;
  std::uint64_t nextRequestId_ = 1;
  std::unordered_map<std::uint64_t, bool> pending_;            // sent, not yet received
  std::unordered_map<std::uint64_t, InboundMessage> arrived_;  // received early
};

// Sends keep-alives for a client's leases (client/lease_keeper.h), from the
// lease keeper's own thread: best effort, replies unread.
class KeepAliveSender {
 public:
  virtual ~KeepAliveSender() = default;
  // Keep-alives to `workers` (each with its pass) and, unless empty, to the
  // `coordinator` (with the secret).
  virtual void ping(const std::vector<std::string>& workers, const std::string& coordinator,
                    const RequestIdentity& identity) = 0;
};

// Where a client's channels come from.
class ChannelFactory {
 public:
  virtual ~ChannelFactory() = default;
  // A channel to the server named `endpoint`, connecting at `address` when
  // that differs (a same-host ipc:// route; empty = endpoint). An address
  // that cannot be used fails here with a clear error.
  virtual Result<std::unique_ptr<Channel>> open(const std::string& endpoint,
                                                const std::string& address,
                                                const RequestIdentity& identity,
                                                const FrameLimits& limits) = 0;
  virtual std::unique_ptr<KeepAliveSender> keepAliveSender() = 0;
};

// A channel to a server that could not be reached at all (an endpoint that
// is no address): every request fails with why.
std::unique_ptr<Channel> unreachableChannel(std::string endpoint, const RequestIdentity& identity,
                                            Status why);

}  // namespace kiln::client
