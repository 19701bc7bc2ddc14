#include "tools/tools_service/caller_gate.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::tools_service {

GateLimits gateLimits(const CallerQuota& key, const GateLimits& defaults) {
  GateLimits limits = defaults;
  if (key.maxConcurrent > 0) limits.maxConcurrent = key.maxConcurrent;
  if (key.callsPerSecond > 0) limits.callsPerSecond = key.callsPerSecond;
  if (key.maxBatch > 0) limits.maxBatch = key.maxBatch;
  return limits;
}

Admission::Admission(Admission&& other) noexcept
    : gate_(std::exchange(other.gate_, nullptr)), places_(std::exchange(other.places_, 0)) {}

Admission& Admission::operator=(Admission&& other) noexcept {
  if (this != &other) {
    if (gate_ != nullptr) gate_->release(places_);
    gate_ = std::exchange(other.gate_, nullptr);
    places_ = std::exchange(other.places_, 0);
  }
  return *this;
}

Admission::~Admission() {
  if (gate_ != nullptr) gate_->release(places_);
}

CallerGate::CallerGate(std::string caller, GateLimits limits)
    : caller_(std::move(caller)),
      limits_(limits),
      tokens_(std::max(1.0, limits.callsPerSecond)),
      refilled_(GateClock::now()) {}

Result<Admission> CallerGate::admit(unsigned calls, unsigned inFlight, GateClock::time_point now) {
  if (calls > limits_.maxBatch) {
    return overloaded(fmt::format(
        "a batch of {} calls is over caller '{}''s limit of {} (batch= in its --keys line, "
        "--max-batch by default): split it",
        calls, caller_, limits_.maxBatch));
  }
  std::lock_guard lock(mutex_);
  if (inFlight_ + inFlight > limits_.maxConcurrent) {
    return overloaded(fmt::format(
        "caller '{}' has {} calls in flight and asks for {} more; its limit is {} at once "
        "(concurrent= in its --keys line, --max-concurrent by default): retry when some end",
        caller_, inFlight_, inFlight, limits_.maxConcurrent));
  }
  if (limits_.callsPerSecond > 0) {
    const double capacity = std::max(1.0, limits_.callsPerSecond);
    const double elapsed = std::chrono::duration<double>(now - refilled_).count();
    tokens_ = std::min(capacity, tokens_ + std::max(0.0, elapsed) * limits_.callsPerSecond);
    refilled_ = std::max(refilled_, now);
    if (calls > capacity) {
      return overloaded(fmt::format(
          "a batch of {} calls is more than caller '{}''s rate of {} calls/s allows at once "
          "(rate= in its --keys line, --rate by default): split it",
          calls, caller_, limits_.callsPerSecond));
    }
    if (tokens_ < calls) {
      return overloaded(fmt::format(
          "caller '{}' is over its rate of {} calls/s (rate= in its --keys line, --rate by "
          "default): {} calls asked, {:.0f} allowed now; retry later",
          caller_, limits_.callsPerSecond, calls, tokens_));
    }
    tokens_ -= calls;
  }
  inFlight_ += inFlight;
  return Admission(this, inFlight);
}

unsigned CallerGate::inFlight() const {
  std::lock_guard lock(mutex_);
  return inFlight_;
}

void CallerGate::release(unsigned places) {
  std::lock_guard lock(mutex_);
  inFlight_ -= std::min(places, inFlight_);
}

}  // namespace kiln::tools_service
