// The floor of any same-host relay on this machine, measured in the same run
// as `kiln bench mlgo`. A stand-in compiler thread answers each question
// after computing for a fixed time. It is asked directly over pipes (as the
// direct loop asks opt) or through a middle thread over a stream socket (as a
// client asks opt through a worker). The middle does nothing but pass bytes
// on, so relay - direct is what one more hop costs by itself here: its
// wake-ups and system calls, in this mode (as-is or pinned), after the same
// amount of compute between questions.
#pragma once

#include <chrono>

#include <kiln/status.h>

namespace kiln::bench {

struct RelayFloor {
  double directUs = 0;  // median round trip less the compute, asked directly
  double relayUs = 0;   // the same through the middle thread
};

// `rounds` questions each way, each answered after `compute` of busy work.
// Threads start from the caller's thread, so in the caller's CPU affinity.
Result<RelayFloor> measureRelayFloor(std::chrono::microseconds compute, unsigned rounds);

}  // namespace kiln::bench
