// CPU time spent so far, for figures that split a run's CPU between its
// parts (benches, the demo's learners and cluster).
#pragma once

#include <sys/types.h>
#include <time.h>

namespace kiln {

// This process's CPU seconds (every thread, user and system).
inline double processCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Another process's CPU seconds (every thread, user and system); a negative
// value if it cannot be read (the process is gone).
inline double processCpuSeconds(pid_t pid) {
  clockid_t clock{};
  timespec now{};
  if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &now) != 0) return -1;
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// The calling thread's CPU seconds.
inline double threadCpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

}  // namespace kiln
