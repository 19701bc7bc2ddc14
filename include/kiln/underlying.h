// Underlying workers and experiments as plain values, shared by the nesting
// host (which runs underlying workers), the coordinator (which plans them)
// and the client (which addresses them). Their wire conversions are in
// common/types/underlying_wire.h (public client code needs no Cap'n Proto).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct UnderlyingSpec {
  std::uint64_t workerId = 0;
  std::string experiment;
  std::uint32_t weight = 1;
  std::uint32_t maxSessions = 0;  // 0 = the host's limit
  std::vector<std::string> sessionTypes;
  // The owning experiment's pass on this worker's host (common/security/identity.h):
  // a client must present it to reach this worker. Empty on a spec not yet
  // keyed, and in every view a client is shown.
  std::string experimentPass;
};

struct LoadFigures {
  std::uint32_t liveSessions = 0;
  std::uint32_t busySlots = 0;
  std::uint32_t queuedRequests = 0;
  std::uint64_t stepsTotal = 0;
};

struct UnderlyingStatus {
  UnderlyingSpec spec;
  LoadFigures load;
};

struct ExperimentSpec {
  std::string name;
  std::uint32_t workers = 1;
  std::uint32_t weight = 1;
  std::uint32_t maxSessions = 0;
  std::vector<std::string> sessionTypes;
  bool pack = false;  // fill hosts one by one; default spreads over hosts
};

}  // namespace kiln
