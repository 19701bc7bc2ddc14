// kiln's main job (`kiln demo`): two real learning experiments, PPO pass
// ordering learners (tools/demo/pass_learner.h) with different settings, whose
// training lulls are their real updates. On the embedded single-node
// default they run first on one nesting host (the layout kiln's nesting
// exists for, with live progress), then, in the same run and on the same
// work, on the layouts a user would otherwise choose:
//   dedicated: two plain workers of half the slots, one per experiment;
//   shared:    the same two workers as one pool, sessions placed by the
//              coordinator (first come, first served).
// On the embedded default each worker host is a machine with a fixed CPU
// budget (common/process/cpu_budget.h; half the slots' CPUs each for the
// dedicated and shared workers, all of them for the nesting host), and the
// learners train outside it, as on a cluster where they train elsewhere.
// The learners are seeded, so every layout walks the same learning curve
// per iteration: the layouts differ in wall time alone. The report compares
// aggregate steps/s, each experiment's wall time to its last iteration and
// to a fixed reward, fairness and CPU use (the learners' updates apart), and
// draws the nested host's utilization timeline and the learning curves.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/curve_keys.h>
#include <kiln/status.h>
#include "tools/demo/learning_report.h"
#include "tools/demo/pass_learner.h"

namespace kiln::demo {

struct LearningDemoOptions {
  std::string coordinator;  // empty: embedded clusters; else the nested run alone, there
  unsigned slots = 0;       // embedded hosts' slots in all; 0 = the machine's cores (even)
  std::vector<LearnerSettings> experiments;  // two
  std::vector<Layout> layouts = {Layout::kNested, Layout::kDedicated, Layout::kShared};
  std::string report = "kiln-demo-report.html";
  std::string json;  // where to write the figures as JSON; empty = nowhere
  std::optional<ClusterKeys> keys;
  std::optional<std::vector<std::filesystem::path>> allowFiles;
  // The worker hosts' CPUs together (0 = half the cores, the learners get
  // the rest) and how each host's budget is enforced: auto, cgroup-v2,
  // cgroup-v1, affinity, or none (every host shares every core).
  double workerCpus = 0;
  std::string budget = "auto";
};

// The two default experiments over `benchmarks`, sized for about a minute
// on 2 cores, or a few seconds with `quick`; their policies are evaluated
// on defaultHeldOut() too (less any of `benchmarks`).
std::vector<LearnerSettings> defaultLearners(const std::vector<std::string>& benchmarks,
                                             bool quick);

Status runLearningDemo(const LearningDemoOptions& options, std::FILE* out);

}  // namespace kiln::demo
