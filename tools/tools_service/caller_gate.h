// One caller's quotas in `kiln tools serve` (api_keys.h): calls in flight at
// once, calls per second (a token bucket holding one second's worth) and
// calls per batch. A request is admitted whole or refused whole, at once,
// never queued: a caller over its quota gets 429 and every other caller's
// calls go on as before (each caller has a gate of its own).
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include <kiln/status.h>
#include "tools/tools_service/api_keys.h"

namespace kiln::tools_service {

using GateClock = std::chrono::steady_clock;

// The quotas a gate enforces: a key's, its zero fields filled in from the
// service's defaults (callsPerSecond 0 stays "no limit").
struct GateLimits {
  unsigned maxConcurrent = 16;
  double callsPerSecond = 0;
  unsigned maxBatch = 64;
};
GateLimits gateLimits(const CallerQuota& key, const GateLimits& defaults);

class CallerGate;

// The places a request holds in its caller's gate, given back when it ends.
class Admission {
 public:
  Admission() = default;
  Admission(Admission&& other) noexcept;
  Admission& operator=(Admission&& other) noexcept;
  ~Admission();
  unsigned places() const { return places_; }

 private:
  friend class CallerGate;
  Admission(CallerGate* gate, unsigned places) : gate_(gate), places_(places) {}
  CallerGate* gate_ = nullptr;
  unsigned places_ = 0;
};

class CallerGate {
 public:
  CallerGate(std::string caller, GateLimits limits);

  // Admits `calls` calls made `inFlight` at a time (1 for a single call; a
  // batch runs min(calls, maxConcurrent) at once). overloaded, naming the
  // quota and its key field, when the batch is too big, the caller's
  // in-flight calls would exceed its concurrency, or its rate is spent.
  Result<Admission> admit(unsigned calls, unsigned inFlight, GateClock::time_point now);
  const GateLimits& limits() const { return limits_; }
  unsigned inFlight() const;

 private:
  friend class Admission;
  void release(unsigned places);

  const std::string caller_;
  const GateLimits limits_;
  mutable std::mutex mutex_;
  unsigned inFlight_ = 0;
  double tokens_ = 0;  // calls the rate allows now
  GateClock::time_point refilled_;
};

}  // namespace kiln::tools_service
