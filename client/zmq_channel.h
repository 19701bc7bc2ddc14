// The client's channels over ZeroMQ: a DEALER socket per server, moved to a
// direct channel (a stream socket read by the worker's own loop,
// worker/direct_channels.h: a Unix one on the same host, TCP across hosts)
// when the server offers one.
// The channel watches its connection (ZeroMQ socket events, plus ZMTP
// heartbeats for peers that vanish without closing it): once the server
// was connected and the connection drops, waiting requests fail at once
// with "disconnected" instead of at their deadline.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <zmq.hpp>

#include <kiln/curve_keys.h>
#include "client/channel.h"
#include "common/base/spin_before_sleep.h"
#include "common/base/unique_fd.h"
#include "common/transport/readiness_poll.h"
#include "common/transport/stream_frames.h"

namespace kiln::client {

class ZmqChannel final : public Channel {
 public:
  static constexpr Duration kReopenDirectTimeout = std::chrono::seconds(1);
  // `address` is where the socket connects when it differs from the
  // server's name `endpoint` (a same-host ipc:// route); empty = endpoint.
  // With `keys`, the connection is CURVE-authenticated and encrypted; a
  // server that refuses the handshake fails requests at once with
  // permission denied ("refused by authentication"), not at their deadline.
  // Throws zmq::error_t for an address ZeroMQ cannot connect to.
  ZmqChannel(zmq::context_t& zmq, std::string endpoint, const RequestIdentity& identity,
             FrameLimits limits, std::string address = {},
             std::optional<ClusterKeys> keys = std::nullopt);
  ~ZmqChannel() override;

  const std::string& address() const { return address_; }
  // The address ZeroMQ reported connecting to; empty until connected.
  std::string connectedAddress() override {
    readEvents();
    return connectedAddress_;
  }

  Result<std::uint64_t> send(capnp::MessageBuilder& builder) override;
  // Tests only: the state libzmq was seen to end in, its pipe to the server
  // gone without an event (the socket disconnected behind our back).
  void dropPipeForTesting() { (void)zmq_disconnect(socket_.handle(), address_.c_str()); }
  Result<InboundMessage> await(std::uint64_t requestId, TimePoint deadline) override;
  // Moves this channel's requests to a direct channel, if its server offers
  // one (worker/direct_channels.h): a request and its reply then skip
  // ZeroMQ's I/O threads. Same host (an ipc:// address): its local stream
  // socket; else its TCP listener, on the host of the endpoint. Call it
  // before any request is outstanding (a request sent on one transport must
  // not overtake one sent on the other). On failure the channel stays on
  // ZeroMQ, whose connection keeps watching the server (heartbeats) either way.
  Status openDirect(Duration timeout) override;
  bool direct() const override { return directFd_ >= 0; }
  // How long await() polls a direct channel for the reply before it sleeps
  // (common/base/spin_before_sleep.h); zero (the default) never polls.
  // Never on a thread confined to one CPU (SpinBeforeSleep::forThisThread).
  void spinForReplies(Duration window) override {
    replySpin_ = SpinBeforeSleep::forThisThread(window);
  }
  void readAvailable() override;
  bool replyReady(std::uint64_t requestId) override;
  void addTo(ReadinessPoll& poll) override;
  bool peerLost() override {
    readEvents();
    return lost_;
  }
  // A process whose loop is stuck still answers ZMTP heartbeats from
  // ZeroMQ's own thread: only the client can tell it is lost.
  void markLost() override { lost_ = true; }

 private:
  void readEvents();
  // The ZeroMQ connection dropped: the direct stream, which belongs to it,
  // is closed (a worker back on the network after a partition holds the
  // other end of a stream that may be dead or stale), and requests go over
  // ZeroMQ until one asks for a new stream after the reconnect.
  void dropDirect();
  // Makes socket_ (and its monitor) and connects it to address_; closes them.
  void openSocket();
  void closeSocket();
  // True when ZeroMQ holds no pipe to the server: it gave up on it.
  bool pipeGone();
  // Reads the direct channel; sets lost_ when it dropped.
  std::optional<Result<InboundMessage>> readDirect(std::uint64_t requestId);
  // Polls the direct channel for the reply to `requestId` for as long as
  // replySpin_ says, without sleeping.
  std::optional<Result<InboundMessage>> spinForReply(std::uint64_t requestId);
  Status connectDirect(const std::string& address, const std::string& token, TimePoint deadline);
  Result<UniqueFd> connectDirectSocket(const std::string& address, TimePoint deadline);
  // Polls socket_ (until direct), monitor_ if there is one, directFd_ if open.
  void pollItems();

  // More than any client keeps in flight to one server: a send that finds
  // no room is a connection ZeroMQ gave up on, or a peer that takes nothing.
  static constexpr int kSendQueueMessages = 100000;
  static constexpr std::chrono::milliseconds kPipeCheckEvery{1000};
  zmq::context_t& zmq_;
  std::optional<ClusterKeys> keys_;
  std::string address_;
  std::string connectedAddress_;
  zmq::socket_t socket_;
  unsigned socketGeneration_ = 0;  // names each monitor's inproc address apart
  zmq::socket_t monitor_;          // PAIR receiving socket_'s connection events
  ReadinessPoll poll_;
  std::size_t socketIndex_ = 0;
  std::size_t monitorIndex_ = 0;
  std::size_t directIndex_ = 0;
  int directFd_ = -1;
  StreamFrameReader directReader_;
  std::size_t maxMessageBytes_;
  StreamFrameWriter directWriter_;
  bool reopenDirect_ = false;  // a direct stream was dropped with its connection
  SpinBeforeSleep replySpin_{Duration::zero()};
  const bool refusalMeansGone_;  // a same-host worker's abstract socket (ipc://@...)
  bool connected_ = false;
  bool lost_ = false;
  bool pipeDropped_ = false;  // lost_ because ZeroMQ dropped its pipe (a new socket mends it)
  bool curve_ = false;
  bool handshaken_ = false;      // a handshake with the server succeeded once
  Status refused_ = okStatus();  // the latest handshake refusal, until one succeeds
  int vagueFailures_ = 0;        // handshakes failed without detail since the last success
};

// Keep-alives over ZeroMQ, one DEALER socket per endpoint (used from the
// lease keeper's thread only).
class ZmqKeepAliveSender final : public KeepAliveSender {
 public:
  ZmqKeepAliveSender(zmq::context_t& zmq, std::optional<ClusterKeys> keys);
  void ping(const std::vector<std::string>& workers, const std::string& coordinator,
            const RequestIdentity& identity) override;

 private:
  zmq::context_t& zmq_;
  std::optional<ClusterKeys> keys_;
  std::map<std::string, zmq::socket_t> sockets_;
};

// The channels of a client on a real cluster: it owns the ZeroMQ context.
class ZmqChannelFactory final : public ChannelFactory {
 public:
  explicit ZmqChannelFactory(std::optional<ClusterKeys> keys);
  ~ZmqChannelFactory() override;
  Result<std::unique_ptr<Channel>> open(const std::string& endpoint, const std::string& address,
                                        const RequestIdentity& identity,
                                        const FrameLimits& limits) override;
  std::unique_ptr<KeepAliveSender> keepAliveSender() override;

 private:
  zmq::context_t zmq_{1};
  std::optional<ClusterKeys> keys_;
};

}  // namespace kiln::client
