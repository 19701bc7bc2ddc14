// The floors that `kiln bench mlgo` and `kiln bench llvm` judge a same-host
// request against, measured in the same run and mode, between this process
// and echo processes it starts: the transport the request and its reply
// really take, with the waiting discipline they really meet. A same-host
// client's request goes over the direct channel, a Unix stream socket, and
// the worker's loop polls for a moment after its reply
// (common/base/spin_before_sleep.h), so the next request finds it awake. The
// client polls for its reply for a moment too: a quick reply (a noop step)
// finds it awake, one after a compiler's milliseconds (an MLGO decision)
// wakes it. With ClientOptions::directSameHost off, requests go over ZeroMQ
// ipc.
#pragma once

#include <map>
#include <string>

#include "bench/socket_floor.h"
#include "tests/support/child_cluster.h"

namespace kiln::bench {

// Floor paths, as they appear in the floor rows and in `judged_against`.
inline constexpr const char* kUnixDecisionFloor = "raw unix stream, client blocks, echo polls";
inline constexpr const char* kUnixBlockingFloor = "raw unix stream, blocking";
inline constexpr const char* kUnixPollingFloor = "raw unix stream, polling";
inline constexpr const char* kZmqIpcFloor = "raw zeromq ipc";
inline constexpr const char* kZmqTcpFloor = "raw zeromq";

struct PathFloorOptions {
  std::string mode;  // "as-is" or "pinned-cpu0"
  // About a decision's request (172 B) and reply (156 B) as the direct
  // channel frames them (seen with strace): the same both ways.
  std::size_t payloadBytes = 160;
  unsigned samples = 2000;
  double seconds = 3;  // upper bound per floor
};

// Starts the echoes in `cluster` (so in its CPU affinity) and measures every
// floor of `mode`: as is, the Unix stream socket with the decisions'
// discipline, both blocking and both polling, and ZeroMQ ipc; pinned to one
// CPU, where a spinner starves its peer, only the blocking ones.
Result<std::map<std::string, StreamFloor>> measurePathFloors(testsupport::ChildCluster& cluster,
                                                             const PathFloorOptions& options);

// Whether the polling floors mean anything in `mode`: as is, and only when
// this thread may run on several CPUs (on one, a poller starves its peer for
// a whole time slice: milliseconds per round trip).
bool pollingFloorsApply(const std::string& mode);

// Whether the client's wait for a reply ends before its polling window
// (ClientOptions::replySpin) does.
enum class ReplyWait { kQuick, kAfterCompileWork };

// The floor path a request is judged against: that of the transport that
// `client`'s requests to the worker at `workerEndpoint` took (the direct
// channel, or ZeroMQ over ipc or TCP), in `mode`, with the client's waiting
// for `wait`. A bench may not measure every such floor (ZeroMQ over TCP is
// `kiln bench rtt`'s).
Result<std::string> judgedFloorPath(client::Client& client, const std::string& workerEndpoint,
                                    const std::string& mode, ReplyWait wait);

}  // namespace kiln::bench
