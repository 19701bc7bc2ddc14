// Turns SIGINT/SIGTERM into a call to `onStop` on a dedicated thread, so that
// servers stop through their normal, thread-safe stop() path.
#pragma once

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

}  // namespace kiln
