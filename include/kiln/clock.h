// Time as a dependency: servers read the clock through this interface so that
// tests can drive heartbeats, leases and deadlines with a fake clock.
#pragma once

#include <atomic>
#include <chrono>

namespace kiln {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;
using std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
};

// A clock that only moves when a test says so. Thread-safe reads.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{} + std::chrono::hours(1)) : now_(start) {}
  TimePoint now() const override { return now_.load(); }
  void advance(Duration d) { now_.store(now_.load() + d); }

 private:
  std::atomic<TimePoint> now_;
};

inline std::int64_t toMillis(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace kiln
