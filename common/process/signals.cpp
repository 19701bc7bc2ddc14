#include "common/process/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <optional>

#include "common/base/exit_codes.h"

namespace kiln {

namespace {

sigset_t handledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);  // our own wake-up at destruction
  return set;
}

// Waits for one of `set` until `deadline` (none: for ever); 0 when it passed.
int waitForOne(const sigset_t& set,
               const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  for (;;) {
    if (!deadline) {
      int signal = 0;
      if (::sigwait(&set, &signal) == 0) return signal;
      continue;
    }
    const auto left = *deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timespec wait{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    const int signal = ::sigtimedwait(&set, nullptr, &wait);
    if (signal > 0) return signal;
    if (errno == EAGAIN) return 0;
  }
}

}  // namespace

StopOnSignal::StopOnSignal(std::chrono::milliseconds bound) : bound_(bound) {
  const sigset_t set = handledSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { waitForSignals(); });
}

StopOnSignal::StopOnSignal(std::function<void()> onStop) : StopOnSignal() {
  onSignal(std::move(onStop));
}

StopOnSignal::~StopOnSignal() {
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
}

void StopOnSignal::onSignal(std::function<void()> drain, std::function<void()> now) {
  bool signalled = false;
  {
    std::lock_guard lock(mutex_);
    drain_ = drain;
    now_ = std::move(now);
    signalled = signalled_;
  }
  // A signal that came while the process was starting: drain at once.
  if (signalled && drain) drain();
}

void StopOnSignal::waitForSignals() {
  const sigset_t set = handledSignals();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  for (int received = 0;;) {
    const int signal = waitForOne(set, deadline);
    if (signal == SIGUSR2) return;
    std::function<void()> handler;
    {
      std::lock_guard lock(mutex_);
      // The bound passing counts as the second signal.
      if (signal != 0 && ++received == 1) {
        signalled_ = true;
        handler = drain_;
        if (bound_ > std::chrono::milliseconds::zero()) {
          deadline = std::chrono::steady_clock::now() + bound_;
        }
      } else {
        handler = now_;
        if (!handler) handler = [] { std::_Exit(kExitStoppedAtOnce); };
      }
    }
    if (handler) handler();
  }
}

namespace {
volatile std::sig_atomic_t watchdogExitCode = 1;
void exitFromAlarm(int) { ::_exit(watchdogExitCode); }
}  // namespace

void exitAfter(std::chrono::seconds delay, int code) {
  watchdogExitCode = code;
  struct sigaction action {};
  action.sa_handler = exitFromAlarm;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGALRM, &action, nullptr);
  // Every thread may take it: none of kiln's threads block SIGALRM.
  ::alarm(static_cast<unsigned>(std::max<long>(1, delay.count())));
}

}  // namespace kiln
