// pidfd_open/pidfd_send_signal (Linux 5.3+) through syscall(): Debian 12's
// glibc 2.36 has wrappers, but syscall() keeps older headers building too.
#include "compilers/mlgo_session/kill_switch.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kiln::mlgo_session {

namespace {

int openPidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void killThrough(int pidfd, pid_t fallbackPid) {
  if (pidfd >= 0) {
    (void)::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  } else if (fallbackPid > 0) {
    // No pidfd (old kernel): the owner has not reaped the child yet, since it
    // is being armed now, so the pid still names it.
    (void)::kill(fallbackPid, SIGKILL);
  }
}

}  // namespace

KillSwitch::~KillSwitch() { disarm(); }

void KillSwitch::arm(pid_t pid) {
  int fd = openPidfd(pid);
  std::lock_guard lock(mutex_);
  if (fired_.load()) {
    killThrough(fd, pid);
    if (fd >= 0) ::close(fd);
    return;
  }
  if (fd >= 0) pidfds_.push_back(fd);
}

void KillSwitch::disarm() {
  std::lock_guard lock(mutex_);
  for (int fd : pidfds_) ::close(fd);
  pidfds_.clear();
}

void KillSwitch::fire() {
  std::lock_guard lock(mutex_);
  fired_.store(true);
  for (int fd : pidfds_) killThrough(fd, -1);
}

void KillSwitch::reset() {
  std::lock_guard lock(mutex_);
  for (int fd : pidfds_) ::close(fd);
  pidfds_.clear();
  fired_.store(false);
}

}  // namespace kiln::mlgo_session
