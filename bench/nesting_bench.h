// `kiln bench nesting`: K experiments, each alternating a collection phase
// (a fixed number of steps over its sessions, all in flight) and a training
// lull: a learner's update (bench/nesting_learner.h) sized to take a
// fraction L of the experiment's time on its dedicated machine, phases
// staggered so that lulls interleave. Three layouts of real kiln processes,
// measured in the same run on the same work (bench/nesting_layouts.h):
// dedicated machines, one shared pool of plain workers, one `kiln nest`
// host; each host a machine with a fixed CPU budget (W/K CPUs per plain
// worker, W for the nesting host), the learners and clients outside it, as
// a cluster runs them. Two kinds of work (bench/nesting_work.h): calibrated
// busy steps, and llvm pass-ordering episodes on kiln-bench-v0.
// Figures per layout: aggregate collection throughput and wall throughput
// against the dedicated layout's, beside the ideal min(K, 1/(1-L)); each
// experiment's collection time against its baseline, fairness, slot and
// CPU use; for each K and L asked for.
#pragma once

#include <string>
#include <vector>

#include <kiln/status.h>
#include "bench/stats.h"

namespace kiln::bench {

struct NestingOptions {
  std::vector<unsigned> experimentCounts = {2, 4};
  // Lull fractions: the learner's update over the experiment's time on its
  // dedicated machine.
  std::vector<double> lulls = {0.5};
  // The workers' CPUs in all (0 = 40% of this machine's cores; the
  // learners get 80% of the cores less these, the coordinator and clients
  // the rest, unbudgeted), and how budgets are enforced:
  // auto (the best this machine allows), cgroup-v2, cgroup-v1, affinity, or
  // none (every host shares every core: the layouts do not model machines).
  double workerCpus = 0;
  std::string budget = "auto";
  unsigned slots = 0;  // 0 = the machine's cores (at least K)
  unsigned phases = 3;
  std::string work = "both";  // busy, llvm or both
  // Steps per experiment and collection phase, by kind of work.
  unsigned busySteps = 400;
  unsigned llvmSteps = 200;
  unsigned busyMicros = 2000;  // compile time of one busy step
  unsigned passesPerStep = 3;  // llvm
  unsigned episodeSteps = 8;   // llvm: steps per episode
  // Sessions per slot an experiment may use, so that a slot has the next
  // step queued while the client handles the last reply.
  unsigned sessionsPerSlot = 2;
};

Result<Report> runNestingBench(const NestingOptions& options);

}  // namespace kiln::bench
