// Exit codes a supervisor (systemd, Kubernetes, Slurm's batch script, the
// nesting host, the benchmarks) acts on.
#pragma once

namespace kiln {

// The process stopped on its own after a crash it caught inside compile work
// (ServiceContext::damage()): it answered what it ran, but its memory can no
// longer be trusted. Start it again; its sessions are restored by replay.
// EX_TEMPFAIL of sysexits.h: "try again later".
inline constexpr int kExitRestartAfterCaughtCrash = 75;

// The process was stopped at once: a second SIGINT/SIGTERM came while it
// drained, or its drain outlasted the operator's bound (--drain-seconds plus
// kStopGrace, common/process/signals.h). Its working directory was removed on a best
// effort; running requests went unanswered. The shell's code for Ctrl-C.
inline constexpr int kExitStoppedAtOnce = 130;

}  // namespace kiln
