#include "common/signals.h"

#include <pthread.h>
#include <signal.h>

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

}  // namespace kiln
