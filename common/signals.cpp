#include "common/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

namespace kiln {

StopOnSignal::StopOnSignal(std::function<void()> onStop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);  // our own wake-up at destruction
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([set, onStop = std::move(onStop)] {
    int signal = 0;
    sigwait(&set, &signal);
    if (signal != SIGUSR2) onStop();
  });
}

StopOnSignal::~StopOnSignal() {
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
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
