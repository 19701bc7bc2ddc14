// The first steps of a forked child that is about to run another program
// (common/process/subprocess.h's tools, programs/sandbox/sandbox.h's keeper). Only
// async-signal-safe calls: the parent is multithreaded.
#pragma once

#include <sys/types.h>

namespace kiln {

// Puts the child in a process group of its own (killing the group reaches
// all it starts); with `dieWithParent`, has it SIGKILLed when the thread
// that forked it ends, and exits at once (127) if `parent` is already gone;
// unblocks every signal and restores the default action of those the
// parent's threads may ignore or catch (SIGPIPE, SIGINT, SIGTERM, SIGCHLD).
void prepareForkedChild(bool dieWithParent, pid_t parent);

}  // namespace kiln
