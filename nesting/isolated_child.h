// The child process of an isolating nesting host (`kiln nest --isolate`):
// it runs the underlying workers of ONE experiment, so that a compile step
// that crashes or hangs takes down only that experiment's sessions on the
// host. It is forked by the host after the session types' contexts are
// initialised, so contexts, parsed modules and the benchmark cache are
// shared copy-on-write; it never touches the host's sockets or threads.
//
// Protocol (ZeroMQ, host ROUTER bound on ipc:// in a private directory,
// child DEALER with its routing id), every message = [kind][fields...]:
//   child -> host   h                          hello: ready for messages
//                   r <routing id> <frame>     a reply for the host to relay
//                   a                          asks for one slot token
//                   t <ns ran, u64>            returns a token after a task
//                   l <load records>           loads of its workers (5 x u64 each)
//                   d <worker id> <u32 ended>  a released worker's sessions ended
//   host -> child   R <routing id> <frame>     a request for one of its workers
//                   C <frame>                  createWorker (its spec)
//                   D <worker id, u64>         release that worker
//                   G                          one slot token granted
//                   K <client id, u64>         refresh that client's leases
//                   B <frame>                  addBenchmark into its cache copy
// A child exits when its host dies (PR_SET_PDEATHSIG); the host kills it
// with SIGKILL on shutdown, on release of its last worker, or when it hangs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "common/status.h"
#include "worker/frontend.h"

namespace kiln::nesting {

namespace isolation {
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

void putU64(std::string& out, std::uint64_t value);
std::uint64_t getU64(std::string_view in, std::size_t at);  // 0 past the end
}  // namespace isolation

struct ChildSetup {
  std::string hostEndpoint;  // the host's ROUTER (ipc://)
  std::string identity;      // this child's routing id
  std::string experiment;
  unsigned slots = 1;  // threads; tokens bound how many run at once
  pid_t hostPid = 0;
  std::uint64_t memoryLimitBytes = 0;  // RLIMIT_AS set first thing in the child; 0 = none
};

// Forks a child that serves `setup` with the parts of the host (used
// copy-on-write). Returns the child's pid in the host.
Result<pid_t> forkIsolatedChild(const ChildSetup& setup, const FrontendParts& parts);

}  // namespace kiln::nesting
