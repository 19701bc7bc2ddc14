// `kiln bench netbed-switch` (internal): the switch of scripts/netbed's
// emulated links. It creates one TAP device per host (the script moves each
// into its host's namespace as eth0), forwards Ethernet frames between them
// as a learning switch, and delays, jitters or drops them as LinkTiming
// says (bench/link_shape.h). For kernels without netem.
//
// Control: lines written to the `control` FIFO, applied in order:
//   cut I / heal I      pull or put back host I's cable (1-based, as the script counts)
//   shape D J L         delay_us jitter_us loss for every link from now on
//   quit
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/link_shape.h"

namespace kiln::bench {

struct LinkSwitchOptions {
  std::vector<std::string> taps;  // device names to create, host 1 first
  LinkShape shape;
  std::filesystem::path control;  // a FIFO to read commands from; empty = none
  std::uint64_t seed = 1;
};

// Prints "switch <taps>" once the taps exist, then forwards until "quit" or
// a signal ends the process. Returns the exit code.
int runLinkSwitch(const LinkSwitchOptions& options);

}  // namespace kiln::bench
