// Direct channels: a worker's requests and replies over a stream socket
// instead of ZeroMQ: a local one for clients on the same host, TCP for
// clients on other hosts.
//
// Why: every ZeroMQ message crosses two I/O threads (the sender's and the
// receiver's), four thread wake-ups per request and reply. A step that a
// compiler answers in ~100 us (an MLGO decision) pays more for those than
// for the work. A client on the same host asks for a direct channel over
// its ZeroMQ connection (OpenDirect), which the worker answers with the
// address of its abstract Unix socket and a single-use token; the client
// connects, sends the token as its first frame, and from then on sends its
// requests there. The worker's poll loop reads them itself. A client on
// another host asks the same (OpenDirect.acrossHosts) and is given the port
// of the worker's TCP listener, on the interface of its ZeroMQ endpoint.
//
// Who may connect: a peer that holds a token obtained through the ZeroMQ
// connection, and on the local socket only one of the worker's own user
// (SO_PEERCRED). The TCP listener runs only on clusters without a key: its
// stream is as plaintext as their ZeroMQ connections, and the token is a
// secret as good as the client's own. Requests on a direct channel are the
// same envelopes, checked the same way (experiment, client, limits).
// A connection that sends a wrong or expired token or no token in time is
// closed and logged; an oversized frame is read past and answered invalid
// argument, and the connection stays. Nothing else is disturbed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <zmq.hpp>

#include <kiln/clock.h>
#include <kiln/logging.h>
#include "common/base/unique_fd.h"
#include "common/transport/frame.h"
#include "common/transport/readiness_poll.h"
#include "common/transport/stream_frames.h"

namespace kiln {

// Whether the worker's loop, after a reply on a direct channel, polls that
// connection for the client's next request before it sleeps (WorkerServer::run,
// --reply-spin-us): on a same-host channel only. Across hosts the next request
// is a network round trip away, so a look mostly misses, and it takes a CPU
// the network stack needs. A floor that judges a cross-host step (kiln bench
// cluster's TCP echo) must wait the same way.
constexpr bool pollsAfterReply(bool acrossHosts) { return !acrossHosts; }

// Whether a worker listens for direct channels from clients on other hosts,
// and on which port (the interface is its ZeroMQ endpoint's).
struct DirectTcp {
  bool enabled = true;     // on clusters without a key, when the worker listens on TCP
  std::uint16_t port = 0;  // 0 = any free port
};

// `--direct-tcp`: "auto" (any free port), "off", or a port 1..65535.
Result<DirectTcp> parseDirectTcp(std::string_view text);

struct DirectGrant {
  // "@name": a socket in the abstract namespace; "tcp://host:port": the
  // TCP listener, whose port the client reaches on the host of the
  // worker's endpoint it already uses.
  std::string address;
  std::string token;
};

class DirectChannels {
 public:
  using Deliver = std::function<void(const std::string& route, InboundMessage message)>;

  static constexpr std::chrono::seconds kTokenLifetime{10};
  static constexpr std::size_t kMaxConnections = 1024;

  DirectChannels(FrameLimits limits, const Clock& clock, Logger logger);
  ~DirectChannels();
  DirectChannels(const DirectChannels&) = delete;
  DirectChannels& operator=(const DirectChannels&) = delete;

  // Listens on the abstract socket `name` (without the '@').
  Status listenLocal(const std::string& name);
  // Listens for clients on other hosts on host:port (port 0 = any free port).
  Status listenTcp(const std::string& host, std::uint16_t port);
  bool listening() const { return local_.fd.get() >= 0 || tcp_.fd.get() >= 0; }

  // "@name" of the local listener; empty without one.
  const std::string& address() const { return local_.address; }
  // "tcp://host:port" of the TCP listener; empty without one.
  const std::string& tcpAddress() const { return tcp_.address; }
  // A token for one connection to the local listener, or with `acrossHosts`
  // to the TCP listener; unimplemented when that listener is not running.
  Result<DirectGrant> grant(bool acrossHosts = false);

  // Routing ids of direct connections start with a zero byte and are longer
  // than ZeroMQ's 5-byte ids, so they never collide with a ROUTER peer.
  static bool isDirectRoute(const std::string& route);

  // Adds the listener and the connections to `poll`; after its wait,
  // onReady() accepts, reads and hands each request to `deliver`.
  void addTo(ReadinessPoll& poll);
  void onReady(const ReadinessPoll& poll, const Deliver& deliver);
  // Queues a reply and writes what the socket takes now. A reply for a
  // connection that is gone is dropped (its client sees the drop).
  void send(const std::string& route, const zmq::message_t& frame);
  // Before the process exits: waits up to `budget` for queued replies to leave.
  void flushAll(Duration budget);
  std::size_t connections() const { return connections_.size(); }
  // Replies sent to clients on this host so far (a loop turn that sent some
  // may poll before sleeping); replies across hosts are not counted.
  std::uint64_t repliesSent() const { return repliesSent_; }
  // Reads the same-host connection that was sent the last reply, without a poll: what
  // the loop's wait for a quick next request does (see WorkerServer::run),
  // one system call per look, as a raw socket's reader pays. True when it
  // delivered a request or closed the connection: the loop has work.
  bool readLastReplied(const Deliver& deliver);

 private:
  struct Listener {
    UniqueFd fd;
    std::string address;
    bool tcp = false;
    std::size_t pollIndex = 0;
  };
  struct Connection {
    int fd = -1;
    StreamFrameReader reader;
    StreamFrameWriter writer;
    bool authenticated = false;
    TimePoint acceptedAt;
    std::string hello;         // the token's frame, as far as it came
    std::string route;         // routeOf(serial), made once
    bool acrossHosts = false;  // accepted on the TCP listener
  };

  // Requests read but not yet delivered; kept between reads for its capacity.
  // Each frame read, decoded, with the request id to answer when it is not.
  using Batch = std::vector<std::pair<std::uint64_t, Result<InboundMessage>>>;

  void acceptAll(const Listener& listener);
  // Whether a peer accepted on `listener` may stay (not yet authenticated).
  bool admit(const Listener& listener, int fd);
  // Reads one connection; false when it must be closed.
  bool readFrom(std::uint64_t serial, Connection& connection, const Deliver& deliver);
  // Reads the token's frame; false when the connection was closed.
  bool readHello(std::uint64_t serial, Connection& connection);
  bool authenticate(Connection& connection, const std::string& token);
  // Logged as a warning unless `expected` (the client closed its end).
  void close(std::uint64_t serial, const std::string& why, bool expected = false);
  // Closes after a read or write failed: expected when the client went away.
  void closeFailed(std::uint64_t serial, const Connection& connection, const Status& why);
  static std::string routeOf(std::uint64_t serial);

  Listener local_;
  Listener tcp_;
  std::uint64_t repliesSent_ = 0;
  std::uint64_t lastReplied_ = 0;  // the serial of the connection sent the last reply
  FrameLimits limits_;
  const Clock& clock_;
  Logger logger_;
  std::uint64_t nextSerial_ = 1;
  Batch spareBatch_;
  std::map<std::uint64_t, Connection> connections_;
  std::map<std::string, TimePoint> tokens_;  // token -> expiry
  // Poll indices of the last addTo(): each connection (the listeners keep theirs).
  std::vector<std::pair<std::uint64_t, std::size_t>> polled_;
};

}  // namespace kiln
