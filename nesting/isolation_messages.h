// The messages between an isolating nesting host and its child processes
// (nesting/isolating_backend.h, nesting/isolated_child.h), decoded from
// their ZeroMQ parts into plain values in one place. Decoding is pure and
// total: a message of an unknown kind, with the wrong number of parts, a
// field of the wrong size or a frame that cannot be read is invalid-argument,
// never an exception, so that neither side's loop can be brought down by
// what the other sends (a child's memory may be damaged by the compile work
// it ran). Each side sends exactly the sizes decoded here. Frames are read
// with the operator's limits (--max-message-bytes), which both sides are
// given: a request the host accepted is one its child can read.
//
// Protocol (ZeroMQ, host ROUTER bound on ipc:// in a private directory,
// child DEALER with its routing id), every message = [kind][fields...],
// u64 fields 8 bytes little-endian:
//   child -> host   h                          hello: ready for messages
//                   r <routing id> <frame>     a reply for the host to relay
//                   a                          asks for one slot token
//                   t <ns ran, u64>            returns a token after a task
//                   l <load records>           loads of its workers (5 x u64 each)
//                   d <worker id> <u64 ended>  a released worker's sessions ended
//   host -> child   R <routing id> <request id, u64> <frame>
//                                              a request for one of its workers
//                   C <frame>                  createWorker (its spec)
//                   D <worker id, u64>         release that worker
//                   G                          one slot token granted
//                   K <client id, u64>         refresh that client's leases
//                   B <frame>                  addBenchmark into its cache copy
//                   F <ns, u64> <why>          the host was cut off: drop the sessions
//                                              of clients silent for the last ns
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <kiln/status.h>
#include "common/security/identity.h"
#include "common/transport/frame.h"
#include "common/types/underlying_wire.h"

namespace kiln::nesting::isolation {

inline constexpr char kHello = 'h';
inline constexpr char kReply = 'r';
inline constexpr char kAcquire = 'a';
inline constexpr char kTokenBack = 't';
inline constexpr char kLoad = 'l';
inline constexpr char kReleased = 'd';
inline constexpr char kRequest = 'R';
inline constexpr char kCreate = 'C';
inline constexpr char kRelease = 'D';
inline constexpr char kGrant = 'G';
inline constexpr char kKeepAlive = 'K';
inline constexpr char kBenchmark = 'B';
inline constexpr char kDropSilentClients = 'F';

// The bytes of each received part, as the decoders below read them.
std::vector<std::string_view> partViews(const std::vector<zmq::message_t>& parts);

void putU64(std::string& out, std::uint64_t value);
std::uint64_t getU64(std::string_view in, std::size_t at);  // 0 past the end

// --- child -> host -------------------------------------------------------

struct Hello {};
// What the host reads of a reply it relays.
struct ReplySummary {
  enum class Kind { kOther, kSessionStarted, kForked };
  std::uint64_t requestId = 0;
  Kind kind = Kind::kOther;
  std::uint64_t sessionId = 0;  // of kSessionStarted and kForked
};
struct ChildReply {
  std::string routingId;
  // Absent when the frame is not a readable reply envelope; the host relays
  // the frame (the message's third part) either way.
  std::optional<ReplySummary> summary;
};
struct AcquireToken {};
struct TokenBack {
  std::chrono::nanoseconds ran{};
};
struct WorkerLoad {
  std::uint64_t workerId = 0;
  LoadFigures load;  // busySlots carries the worker's busy sessions
};
struct Loads {
  std::vector<WorkerLoad> workers;
};
struct Released {
  std::uint64_t workerId = 0;
  std::uint32_t sessionsEnded = 0;
};
using ChildMessage = std::variant<Hello, ChildReply, AcquireToken, TokenBack, Loads, Released>;

// `parts` without the routing id the host's ROUTER puts first; `limits`: the
// host's own (its operator's --max-message-bytes), which replies are read with.
Result<ChildMessage> decodeChildMessage(const std::vector<std::string_view>& parts,
                                        const FrameLimits& limits);

// A child's reply over `limits` (the host would not read it, and its client
// would wait for its deadline) as an error reply to the same request, naming
// the flag; the frame as it was if its request id cannot be read.
zmq::message_t refuseOversizedReply(zmq::message_t frame, const FrameLimits& limits);

// --- host -> child -------------------------------------------------------

struct ForwardedRequest {
  std::string routingId;
  InboundMessage message;
};
// A request whose frame the child cannot read: it answers `requestId` with
// an error rather than leave the client waiting for its deadline.
struct UnreadableRequest {
  std::string routingId;
  std::uint64_t requestId = 0;
  Status why;
};
struct CreateWorker {
  UnderlyingSpec spec;
};
struct ReleaseWorker {
  std::uint64_t workerId = 0;
};
struct GrantToken {};
struct KeepAlive {
  std::uint64_t clientId = 0;
};
struct AddBenchmarks {
  ClientId client;  // whose they are: the child caches them under its key (privateCacheKey)
  std::vector<std::pair<std::string, std::shared_ptr<const std::string>>> programs;  // uri, bytes
};
struct DropSilentClients {
  std::chrono::nanoseconds silentFor{};
  std::string why;
};
using HostMessage = std::variant<ForwardedRequest, UnreadableRequest, CreateWorker, ReleaseWorker,
                                 GrantToken, KeepAlive, AddBenchmarks, DropSilentClients>;

// `limits`: the host's, which it gave the child (ChildSetup::frames).
// `passKey`: the host process's (HostLimits::passKey), which the client pass
// of a relayed AddBenchmark is checked with.
Result<HostMessage> decodeHostMessage(const std::vector<std::string_view>& parts,
                                      const FrameLimits& limits, const PassKey& passKey = {});

}  // namespace kiln::nesting::isolation
