// Waiting for something another thread or process does, bounded in time: the
// one polling loop the tests, benches and fuzzers share.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include <kiln/clock.h>

namespace kiln::testsupport {

// Polls `done` every `every` until it holds or `timeout` passed; checks once
// more at the deadline, so a condition met while sleeping is not missed.
inline bool waitUntil(const std::function<bool()>& done, Duration timeout,
                      Duration every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

}  // namespace kiln::testsupport
