#include "common/base/spin_before_sleep.h"

namespace kiln {

bool onSeveralCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return true;
  return CPU_COUNT(&cpus) > 1;
}

SpinBeforeSleep SpinBeforeSleep::forThisThread(Duration window) {
  return SpinBeforeSleep(onSeveralCpus() ? window : Duration::zero());
}

Duration SpinBeforeSleep::next() {
  if (window_ <= Duration::zero()) return Duration::zero();
  if (misses_ < kMissesBeforeBackOff) return window_;
  if (++waitsSinceProbe_ < kProbeEvery) return Duration::zero();
  waitsSinceProbe_ = 0;
  return window_;
}

void SpinBeforeSleep::outcome(bool arrived) {
  if (arrived) {
    misses_ = 0;
    waitsSinceProbe_ = 0;
  } else if (misses_ < kMissesBeforeBackOff) {
    ++misses_;
  }
}

}  // namespace kiln
