// Lets another thread kill the compilers a session or job has started, at
// once and without racing the owner's waitpid(): children are signalled
// through pidfds, so a pid that was already reaped (and maybe reused) is never hit.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace kiln::mlgo_session {

class KillSwitch {
 public:
  KillSwitch() = default;
  KillSwitch(const KillSwitch&) = delete;
  KillSwitch& operator=(const KillSwitch&) = delete;
  ~KillSwitch();

  // Watches `pid` (a child of this process that is still unreaped). If the
  // switch has already fired, the child is killed right away.
  void arm(pid_t pid);
  // Forgets every watched child (their owners reap them).
  void disarm();
  // SIGKILLs every watched child and any armed later; thread-safe, idempotent.
  void fire();
  // Re-arms after fire() for the next job; children stay forgotten.
  void reset();
  bool fired() const { return fired_.load(); }

 private:
  mutable std::mutex mutex_;
  std::vector<int> pidfds_;
  std::atomic<bool> fired_{false};
};

}  // namespace kiln::mlgo_session
