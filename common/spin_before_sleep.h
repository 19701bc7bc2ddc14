// Whether one side of a same-host direct channel polls for a moment, instead
// of sleeping at once, when it waits for the other: the worker's loop after
// it replied (for the client's next request), a client after it sent a
// request (for the reply).
//
// Why: a peer that answers at once (a noop or cached step, an MLGO agent's
// small policy) finds the waiting side asleep, and waking it costs a system
// call on each side and, when the scheduler put them on different CPUs, a
// cross-CPU wake-up: 20-30 us on a VM. Polling for up to `window` first
// saves that. A peer that keeps answering later than the window stops it:
// after kMissesBeforeBackOff misses in a row the waiter polls only on every
// kProbeEvery-th wait, to notice when the peer speeds up again, so a slow
// peer costs at most window / kProbeEvery of CPU per wait.
//
// This is the policy; the waiters (WorkerServer::run, client::Channel)
// poll.
#pragma once

#include <sched.h>

#include <chrono>

#include "common/clock.h"

namespace kiln {

class SpinBeforeSleep {
 public:
  static constexpr int kMissesBeforeBackOff = 4;
  static constexpr int kProbeEvery = 16;

  // A zero window never polls.
  explicit SpinBeforeSleep(Duration window) : window_(window) {}
  // `window` for a thread that may run on several CPUs; zero for one
  // confined to a single CPU, where polling only delays the peer that needs
  // that CPU to answer (see onSeveralCpus()).
  static SpinBeforeSleep forThisThread(Duration window);

  // Before a wait: how long to poll before sleeping (zero: sleep now).
  Duration next();
  // What the polling that next() asked for found: the peer's message came,
  // or the window passed without it.
  void outcome(bool arrived);

 private:
  Duration window_;
  int misses_ = 0;
  int waitsSinceProbe_ = 0;
};

// Whether this thread may run on more than one CPU. On one CPU, polling for
// a peer only delays it: the peer needs that CPU to answer.
bool onSeveralCpus();

// Calls `arrived` until it says yes or `window` passes, yielding the CPU
// between calls (on a CPU shared with the peer, the peer runs then); true
// when it said yes.
template <class Arrived>
bool pollFor(Duration window, Arrived&& arrived) {
  const auto until = std::chrono::steady_clock::now() + window;
  do {
    if (arrived()) return true;
    sched_yield();
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

}  // namespace kiln
