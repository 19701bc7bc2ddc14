#include "worker/client_quotas.h"

#include <fmt/format.h>

namespace kiln {

Status ClientQuotas::reserve(ClientId client, const SessionFootprint& footprint) {
  Held& held = held_[client];
  Status refused = okStatus();
  if (held.sessions >= limits_.sessionsPerClient) {
    refused =
        overloaded(fmt::format("client {:x} already holds {} sessions on this worker (limit "
                               "--max-sessions-per-client): end some first",
                               client.value, held.sessions));
  } else if (footprint.compilerProcesses > 0 &&
             held.compilers + footprint.compilerProcesses > limits_.compilersPerClient) {
    refused = overloaded(
        fmt::format("client {:x} already holds {} compiler processes on this worker, each "
                    "session of this type runs {} (limit --max-compilers-per-client): end "
                    "some sessions of the mlgo types first",
                    client.value, held.compilers, footprint.compilerProcesses));
  } else if (footprint.compilerProcesses > 0 &&
             compilers_ + footprint.compilerProcesses > limits_.compilers) {
    refused = overloaded(
        fmt::format("this worker runs its maximum of {} compiler processes for its clients "
                    "(limit --max-compilers): retry later or on another worker",
                    compilers_));
  }
  if (!refused.ok()) {
    if (held.sessions == 0) held_.erase(client);
    return refused;
  }
  ++held.sessions;
  held.compilers += footprint.compilerProcesses;
  compilers_ += footprint.compilerProcesses;
  return okStatus();
}

void ClientQuotas::release(ClientId client, const SessionFootprint& footprint) {
  auto found = held_.find(client);
  if (found == held_.end()) return;
  Held& held = found->second;
  held.compilers -= std::min(held.compilers, footprint.compilerProcesses);
  compilers_ -= std::min(compilers_, footprint.compilerProcesses);
  if (--held.sessions == 0) held_.erase(found);
}

void ClientQuotas::clear() {
  held_.clear();
  compilers_ = 0;
}

}  // namespace kiln
