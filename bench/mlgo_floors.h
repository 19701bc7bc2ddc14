// The floors `kiln bench mlgo` judges its decisions against, measured in the
// same run and mode, between this process and echo processes it starts: the
// transport a decision's request and reply really take, with the waiting
// discipline they really meet. A same-host client's decision goes over the
// direct channel, a Unix stream socket: the client sleeps through the
// compiler's time, so each reply wakes it, while the worker's loop polls for
// a moment after its reply (worker/reply_spin.h), so the next answer finds it
// awake. With ClientOptions::directSameHost off it goes over ZeroMQ ipc.
#pragma once

#include <map>
#include <string>

#include "bench/child_cluster.h"
#include "bench/socket_floor.h"

namespace kiln::bench {

// Floor paths, as they appear in the floor rows and in `judged_against`.
inline constexpr const char* kUnixDecisionFloor = "raw unix stream, client blocks, echo polls";
inline constexpr const char* kUnixBlockingFloor = "raw unix stream, blocking";
inline constexpr const char* kUnixPollingFloor = "raw unix stream, polling";
inline constexpr const char* kZmqIpcFloor = "raw zeromq ipc";

struct MlgoFloorOptions {
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
Result<std::map<std::string, StreamFloor>> measureMlgoFloors(ChildCluster& cluster,
                                                             const MlgoFloorOptions& options);

// The floor path a decision is judged against: that of the transport that
// `client`'s requests to the worker at `workerEndpoint` took, in `mode`.
Result<std::string> judgedFloorPath(client::Client& client, const std::string& workerEndpoint,
                                    const std::string& mode);

}  // namespace kiln::bench
