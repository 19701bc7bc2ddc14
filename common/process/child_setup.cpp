#include "common/process/child_setup.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <initializer_list>

namespace kiln {

void prepareForkedChild(bool dieWithParent, pid_t parent) {
  ::setpgid(0, 0);
  if (dieWithParent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  }
  // The parent's threads may block or ignore signals; the program should not inherit that.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGCHLD}) ::sigaction(sig, &defaults, nullptr);
}

}  // namespace kiln
