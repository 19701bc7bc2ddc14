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

#include <kiln/clock.h>

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
  // What the polling that next() asked for found: true when the peer's
  // message came while this thread polled (PollResult::kArrived); false when
  // the window passed without it, or when it came only once this thread gave
  // its CPU away (a peer on this CPU: polling delays it).
  void outcome(bool arrived);

 private:
  Duration window_;
  int misses_ = 0;
  int waitsSinceProbe_ = 0;
};

// Fairness of a loop that, while it polls for one peer's next message
// (the worker after a reply on a direct channel), reads that peer's
// connection alone: one system call per look instead of a poll of every
// descriptor. Bounds what everyone else waits: every kEvery-th look polls
// every descriptor instead, and after kEvery turns in a row that took the
// peer's message that way, the loop waits on every descriptor (without
// blocking) before it looks again, even for a peer that always has a
// message queued.
class FairQuickLooks {
 public:
  static constexpr int kEvery = 8;

  // Before a look: true when this one polls every descriptor.
  bool pollEverythingNow() {
    if (++looks_ < kEvery) return false;
    looks_ = 0;
    return true;
  }
  // After a turn: whether the loop must wait on every descriptor now;
  // `tookQuickly` says that a look took the peer's message.
  bool mustWait(bool tookQuickly) {
    if (tookQuickly && ++taken_ < kEvery) return false;
    taken_ = 0;
    return true;
  }

 private:
  int looks_ = 0;
  int taken_ = 0;
};

// Whether this thread may run on more than one CPU. On one CPU, polling for
// a peer only delays it: the peer needs that CPU to answer.
bool onSeveralCpus();

// What pollFor found.
enum class PollResult {
  kArrived,  // the message came while this thread polled: polling paid
  // It came during a yield that ran another thread on this CPU for a while:
  // most likely the peer itself, which shares this CPU, so that the wait
  // would have cost less asleep (kiln bench llvm, as is: 65-83 us a noop
  // step when the two ran on one CPU and both polled, against 24 us
  // sleeping). SpinBeforeSleep counts it as a miss.
  kArrivedAfterGivingWay,
  kTimedOut,
};

// A yield that took this long ran someone else in between.
inline constexpr Duration kYieldThatGaveWay = std::chrono::microseconds(5);

// Calls `arrived` until it says yes or `window` passes. Every kYieldEvery-th
// call it checks the clock and yields the CPU, so that a thread sharing this
// CPU (the peer, or anyone) runs then. Not on every call: a yield passes
// through the scheduler (~1 us on a VM), which would delay noticing the
// peer's answer by as much, on both sides of every round trip (kiln bench
// rtt: a yield per call 6.7 us, every 4th 5.5 us, every 16th 5.3 us). The
// window bounds the rest: a spinner that shares its CPU with the peer gives
// way after `window` at most, and SpinBeforeSleep stops polling for a peer
// that keeps answering late or only once it was given the CPU.
inline constexpr int kYieldEvery = 16;
inline void yieldThisCpu() { sched_yield(); }
template <class Arrived, class Yield = void (*)()>
PollResult pollFor(Duration window, Arrived&& arrived, Yield&& yield = yieldThisCpu) {
  const auto until = std::chrono::steady_clock::now() + window;
  bool gaveWay = false;
  for (int calls = 1;; ++calls) {
    if (arrived()) return gaveWay ? PollResult::kArrivedAfterGivingWay : PollResult::kArrived;
    gaveWay = false;
    if (calls % kYieldEvery != 0) continue;
    const auto beforeYield = std::chrono::steady_clock::now();
    if (beforeYield >= until) return PollResult::kTimedOut;
    yield();
    gaveWay = std::chrono::steady_clock::now() - beforeYield >= kYieldThatGaveWay;
  }
}

}  // namespace kiln
