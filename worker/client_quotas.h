// What each client holds on one SessionHost, against the operator's quotas:
// sessions, the compiler processes those sessions may run
// (SessionFootprint), and the bytes of the benchmarks they hold (each
// program once, however many sessions share it). A place is reserved when a start or fork is
// accepted and given back when it fails or its session ends. A refusal names the limit and the flag
// that sets it. Loop-thread only, like the host.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include <kiln/ids.h>
#include <kiln/kit/session_types.h>
#include <kiln/status.h>

namespace kiln {

struct QuotaLimits {
  std::uint32_t sessionsPerClient = 0;
  std::uint32_t compilersPerClient = 0;
  // Every client's together: a client that draws a new identity gets a new
  // quota, the host does not.
  std::uint32_t compilers = 0;
  std::uint64_t benchmarkBytesPerClient = 0;
};

class ClientQuotas {
 public:
  explicit ClientQuotas(QuotaLimits limits) : limits_(limits) {}

  // Takes a place for one more session of `footprint`, or says which quota is full.
  Status reserve(ClientId client, const SessionFootprint& footprint);
  void release(ClientId client, const SessionFootprint& footprint);
  // A session of `client` that reserved its place holds `program` of
  // `bytes` (0: nothing): refused when a program it does not hold yet would
  // take it past its byte quota. Dropped when the session ends, before
  // release(). Programs are told apart by their shared owner, which stays
  // unique while a weak reference to it lives.
  using Program = std::weak_ptr<const std::string>;
  Status holdProgram(ClientId client, const Program& program, std::uint64_t bytes);
  void dropProgram(ClientId client, const Program& program, std::uint64_t bytes);
  void clear();

  std::uint32_t compilers() const { return compilers_; }

 private:
  struct Held {
    std::uint32_t sessions = 0;
    std::uint32_t compilers = 0;
    std::uint64_t bytes = 0;
    std::map<Program, std::uint32_t, std::owner_less<>> programs;  // held by how many
  };
  QuotaLimits limits_;
  std::unordered_map<ClientId, Held> held_;
  std::uint32_t compilers_ = 0;
};

}  // namespace kiln
