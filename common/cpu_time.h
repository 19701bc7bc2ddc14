// CPU time spent so far, for figures that split a run's CPU between its
// parts (benches, the demo's learners and cluster).
#pragma once

#include <time.h>

namespace kiln {

// This process's CPU seconds (every thread, user and system).
inline double processCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The calling thread's CPU seconds.
inline double threadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace kiln
