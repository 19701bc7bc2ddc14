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

Status ClientQuotas::holdProgram(ClientId client, const Program& program, std::uint64_t bytes) {
  if (bytes == 0) return okStatus();
  Held& held = held_[client];
  auto [found, fresh] = held.programs.try_emplace(program, 0);
  if (fresh && held.bytes + bytes > limits_.benchmarkBytesPerClient) {
    held.programs.erase(found);
    return overloaded(
        fmt::format("client {:x} already holds {} bytes of benchmarks in its sessions on this "
                    "worker, and this one is {} more (limit --max-benchmark-bytes-per-client): "
                    "end some sessions first",
                    client.value, held.bytes, bytes));
  }
  if (fresh) held.bytes += bytes;
  ++found->second;
  return okStatus();
}

void ClientQuotas::dropProgram(ClientId client, const Program& program, std::uint64_t bytes) {
  auto found = held_.find(client);
  if (bytes == 0 || found == held_.end()) return;
  Held& held = found->second;
  auto holding = held.programs.find(program);
  if (holding == held.programs.end()) return;
  if (--holding->second == 0) {
    held.bytes -= std::min(held.bytes, bytes);
    held.programs.erase(holding);
  }
}

void ClientQuotas::clear() {
  held_.clear();
  compilers_ = 0;
}

}  // namespace kiln
