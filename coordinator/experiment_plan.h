// Where an experiment's underlying workers go: pure policies over a view of
// the nesting hosts, tested without sockets. Several experiments may share
// (overcommit) the same hosts: their slots are shared by weight on the host.
//   spread: each new worker goes to the eligible host with the fewest workers
//           of this experiment (then fewest workers overall, then lowest id);
//   pack:   fill the host that already has the most workers of this
//           experiment up to its slot count before opening another.
// Rebalancing moves one idle worker at a time from the most to the least
// loaded eligible host while a spread experiment is uneven by more than one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <kiln/ids.h>
#include <kiln/status.h>
#include "common/types/underlying_wire.h"

namespace kiln {

struct NestingHostView {
  WorkerId id;
  std::uint32_t slots = 1;
  std::vector<std::string> sessionTypes;
  std::uint32_t underlyingWorkers = 0;  // of every experiment
};

struct AssignedWorker {
  std::uint64_t workerId = 0;
  WorkerId host;
  std::uint32_t liveSessions = 0;
};

// Hosts for `count` more workers of `spec`, given where its workers are now.
// not-found when no nesting host serves the experiment's session types;
// overloaded (retry when hosts join) when no nesting host is registered.
Result<std::vector<WorkerId>> planNewWorkers(const std::vector<NestingHostView>& hosts,
                                             const ExperimentSpec& spec,
                                             const std::vector<AssignedWorker>& current,
                                             std::uint32_t count);

// The worker to move to even out a spread experiment, if any.
std::optional<std::uint64_t> pickRebalanceMove(const std::vector<NestingHostView>& hosts,
                                               const ExperimentSpec& spec,
                                               const std::vector<AssignedWorker>& current);

}  // namespace kiln
