// Whether the worker's loop polls without sleeping for a moment after it
// replied on a same-host direct channel.
//
// Why: a client that answers at once (an MLGO agent's policy is a small
// model, tens of microseconds per decision) finds the loop asleep, and waking
// it costs a system call on each side and, when the scheduler put the loop
// on another CPU, a cross-CPU wake-up: 20-30 us on a VM. Polling for up to
// `window` first saves that. A client that keeps answering later than the
// window stops it: after kMissesBeforeBackOff misses in a row the loop polls
// only after every kProbeEvery-th reply, to notice when the client speeds up
// again, so a slow client costs at most window / kProbeEvery of CPU per reply.
//
// This is the policy; WorkerServer::run polls.
#pragma once

#include "common/clock.h"

namespace kiln {

class ReplySpin {
 public:
  static constexpr int kMissesBeforeBackOff = 4;
  static constexpr int kProbeEvery = 16;

  // A zero window never polls.
  explicit ReplySpin(Duration window) : window_(window) {}

  // After a loop turn that sent replies on direct channels: how long to poll
  // before sleeping (zero: sleep now).
  Duration afterReply();
  // What the polling that afterReply() asked for found: input came, or the
  // window passed without any.
  void outcome(bool inputArrived);

 private:
  Duration window_;
  int misses_ = 0;
  int repliesSinceProbe_ = 0;
};

}  // namespace kiln
