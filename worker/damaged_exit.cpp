#include "worker/damaged_exit.h"

#include <vector>

#include "common/base/exit_codes.h"
#include "common/process/signals.h"
#include "common/transport/readiness_poll.h"

namespace kiln {

void answerRunningBeforeExit(TaskPool& pool, Mailbox<Completion>& completions,
                             const std::function<void(Completion)>& onCompletion) {
  exitAfter(kDamagedExitWithin, kExitRestartAfterCaughtCrash);
  const auto until = std::chrono::steady_clock::now() + kDamagedAnswerWithin;
  std::vector<Completion> done;
  ReadinessPoll poll;
  const std::size_t ready = poll.addFd(completions.fd());
  for (;;) {
    completions.drain(done);
    for (Completion& completion : done) onCompletion(std::move(completion));
    done.clear();
    if (pool.busy() == 0 || std::chrono::steady_clock::now() >= until) return;
    poll.wait(std::chrono::milliseconds(20));
    (void)poll.ready(ready);  // either way, drain and look again
  }
}

}  // namespace kiln
