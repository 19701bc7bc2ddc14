// The child process of an isolating nesting host (`kiln nest --isolate`):
// it runs the underlying workers of ONE experiment, so that a compile step
// that crashes or hangs takes down only that experiment's sessions on the
// host. It is forked by the host after the session types' contexts are
// initialised, so contexts, parsed modules and the benchmark cache are
// shared copy-on-write; it never touches the host's sockets or threads.
//
// The messages it exchanges with its host: nesting/isolation_messages.h.
// A child exits when its host dies (PR_SET_PDEATHSIG); the host kills it
// with SIGKILL on release of its last worker or when it hangs. On the host's
// clean stop it gets SIGTERM from the host and stops by itself: it refuses
// new requests with the reason, answers what it runs, runs its contexts'
// shutdown(), removes its session directories and exits 0. SIGTERM and
// SIGINT from any other process are ignored (and logged): the host gets
// those too (a terminal's process group, a service's cgroup) and passes the
// stop on, while a child that left on its own would be restarted as crashed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include <kiln/status.h>
#include "nesting/isolation_messages.h"
#include "worker/frontend.h"

namespace kiln::nesting {

struct ChildSetup {
  std::string hostEndpoint;  // the host's ROUTER (ipc://)
  std::string identity;      // this child's routing id
  std::string experiment;
  unsigned slots = 1;  // threads; tokens bound how many run at once
  pid_t hostPid = 0;
  std::uint64_t memoryLimitBytes = 0;  // RLIMIT_AS set first thing in the child; 0 = none
  // The host's (--max-message-bytes): what it accepted, its child reads, and
  // what the host reads of the child's replies.
  FrameLimits frames;
};

// Forks a child that serves `setup` with the parts of the host (used
// copy-on-write). Returns the child's pid in the host.
Result<pid_t> forkIsolatedChild(const ChildSetup& setup, const FrontendParts& parts);

}  // namespace kiln::nesting
