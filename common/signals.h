// Turns SIGINT/SIGTERM into a call to `onStop` on a dedicated thread, so that
// servers stop through their normal, thread-safe stop() path.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace kiln {

class StopOnSignal {
 public:
  // Must be constructed before other threads start (they inherit the mask).
  explicit StopOnSignal(std::function<void()> onStop);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  std::thread thread_;
};

// The last resort of a process that is leaving because its memory may be
// damaged (exit_codes.h): if it is still running `delay` from now, a SIGALRM
// handler ends it with _exit(`code`), as its cleanup may be stuck on a lock
// the crash left held. One per process (it uses alarm()).
void exitAfter(std::chrono::seconds delay, int code);

}  // namespace kiln
