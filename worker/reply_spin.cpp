#include "worker/reply_spin.h"

namespace kiln {

Duration ReplySpin::afterReply() {
  if (window_ <= Duration::zero()) return Duration::zero();
  if (misses_ < kMissesBeforeBackOff) return window_;
  if (++repliesSinceProbe_ < kProbeEvery) return Duration::zero();
  repliesSinceProbe_ = 0;
  return window_;
}

void ReplySpin::outcome(bool inputArrived) {
  if (inputArrived) {
    misses_ = 0;
    repliesSinceProbe_ = 0;
  } else if (misses_ < kMissesBeforeBackOff) {
    ++misses_;
  }
}

}  // namespace kiln
