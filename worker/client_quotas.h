// What each client holds on one SessionHost, against the operator's quotas:
// sessions, and the compiler processes those sessions may run
// (SessionFootprint). A place is reserved when a start or fork is accepted
// and given back when it fails or its session ends. A refusal names the
// limit and the flag that sets it. Loop-thread only, like the host.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "common/ids.h"
#include "common/status.h"
#include "kit/session_types.h"

namespace kiln {

struct QuotaLimits {
  std::uint32_t sessionsPerClient = 0;
  std::uint32_t compilersPerClient = 0;
  // Every client's together: a client that draws a new identity gets a new
  // quota, the host does not.
  std::uint32_t compilers = 0;
};

class ClientQuotas {
 public:
  explicit ClientQuotas(QuotaLimits limits) : limits_(limits) {}

  // Takes a place for one more session of `footprint`, or says which quota is full.
  Status reserve(ClientId client, const SessionFootprint& footprint);
  void release(ClientId client, const SessionFootprint& footprint);
  void clear();

  std::uint32_t compilers() const { return compilers_; }

 private:
  struct Held {
    std::uint32_t sessions = 0;
    std::uint32_t compilers = 0;
  };
  QuotaLimits limits_;
  std::unordered_map<ClientId, Held> held_;
  std::uint32_t compilers_ = 0;
};

}  // namespace kiln
