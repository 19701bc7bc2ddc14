// How a serving process stops on SIGINT/SIGTERM (Slurm, Kubernetes, systemd
// and a terminal's Ctrl-C all stop services so): the first signal drains (no
// new work, running requests answered, contexts shut down, working
// directories removed, exit 0); a second signal, or the drain outlasting its
// bound, stops at once (best-effort removal of the working directory, then
// kExitStoppedAtOnce). The handlers run on a dedicated thread, so that
// servers stop through their normal, thread-safe stop() path.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

namespace kiln {

// What a serving process has after its drain (--drain-seconds) to shut its
// contexts down and remove its working directories before the signal
// thread stops it at once.
inline constexpr std::chrono::seconds kStopGrace{5};

class StopOnSignal {
 public:
  // Blocks SIGINT and SIGTERM in the calling thread, and so in every thread
  // started from it afterwards, and waits for them on a thread of its own.
  // Construct it before any other thread starts (ZeroMQ's, a pool's, a
  // context's): a thread started earlier keeps them unblocked, the kernel
  // may hand a signal to it, and its default action ends the process at
  // once, without any cleanup. `bound` (zero = none): how long after the
  // first signal the process may take to end before `now` runs.
  explicit StopOnSignal(std::chrono::milliseconds bound = std::chrono::milliseconds::zero());
  // The old one-handler form: the first signal calls `onStop`; a second one
  // ends the process at once.
  explicit StopOnSignal(std::function<void()> onStop);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // The first signal calls `drain` (right here when one came before this
  // call); a second signal, or the bound passing, calls `now`, which must
  // end the process (e.g. _exit(kExitStoppedAtOnce)). Without a `now`, the
  // process then ends with std::_Exit(kExitStoppedAtOnce).
  void onSignal(std::function<void()> drain, std::function<void()> now = {});

 private:
  void waitForSignals();

  std::chrono::milliseconds bound_;
  std::mutex mutex_;
  std::function<void()> drain_;
  std::function<void()> now_;
  bool signalled_ = false;  // a first signal came before onSignal()
  std::thread thread_;
};

// The last resort of a process that is leaving because its memory may be
// damaged (exit_codes.h): if it is still running `delay` from now, a SIGALRM
// handler ends it with _exit(`code`), as its cleanup may be stuck on a lock
// the crash left held. One per process (it uses alarm()).
void exitAfter(std::chrono::seconds delay, int code);

}  // namespace kiln
