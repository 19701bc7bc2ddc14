// What a host process does once a context reports damage
// (ServiceContext::damage(): a crash caught inside compile work): it answers
// the requests already running, briefly, since a task may never finish in a
// damaged heap, runs nothing queued, and exits with
// kExitRestartAfterCaughtCrash to be started again. Shared by the worker
// (WorkerServer) and an isolating nesting host's child process.
#pragma once

#include <chrono>
#include <functional>

#include "common/base/mailbox.h"
#include "worker/session_host.h"
#include "worker/task_pool.h"

namespace kiln {

// How long running tasks get to answer, and by when the process must be
// gone whatever happens (a watchdog: common/process/signals.h exitAfter).
inline constexpr auto kDamagedAnswerWithin = std::chrono::seconds(2);
inline constexpr auto kDamagedExitWithin = std::chrono::seconds(10);

// Arms the exit watchdog, then passes every completion to `onCompletion`
// until no task of `pool` runs or kDamagedAnswerWithin has passed.
void answerRunningBeforeExit(TaskPool& pool, Mailbox<Completion>& completions,
                             const std::function<void(Completion)>& onCompletion);

}  // namespace kiln
